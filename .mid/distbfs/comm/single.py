"""One rank, no MPI: every collective is the identity. Used when the job has one process."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .base import Communicator


class SingleRankCommunicator(Communicator):
    """The communicator of a one-process job; needs no MPI installation."""

    kind = "single"
    rank = 0
    size = 1

    def alltoallv(self, offsets: np.ndarray, *payloads: Any) -> tuple[np.ndarray, tuple[Any, ...]]:
        return np.asarray(offsets, dtype=np.int64), payloads

    def allreduce(self, value: Any, op: str = "sum") -> Any:
        return value

    def allgather_object(self, obj: Any) -> list[Any]:
        return [obj]

    def allgather_array(self, array: Any) -> Any:
        return array

    def allgather_equal(self, array: Any) -> Any:
        return array.reshape(1, array.shape[0])

    def broadcast_array(self, array: Any, root: int) -> Any:
        return array

    def exscan(self, value: int) -> int:
        return 0

    def bcast_object(self, obj: Any, root: int = 0) -> Any:
        return obj

    def barrier(self) -> None:
        pass

    def abort(self, code: int) -> None:
        os._exit(code)
