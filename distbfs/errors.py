"""User-facing errors and their agreement across ranks.

Invariant: every error a user can cause (bad flag, bad file, bad source) is an ``InputError``;
the command line prints it as one line and exits with status 2 on every rank. Errors raised from
rank-local work (a rank parsing its share of a file) are made collective by ``agree_on_errors``,
so no rank is left waiting in a collective while another has failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .comm.base import Communicator

EXIT_INPUT_ERROR = 2


class InputError(Exception):
    """Bad input from the user: a flag, an argument, a file. Printed as one line, exit code 2.

    ``all_ranks`` is True when every rank is known to raise the same error (a decision made from
    replicated data: arguments, the vertex count, an agreed error).
    """

    def __init__(self, message: str, *, all_ranks: bool = True) -> None:
        super().__init__(message)
        self.all_ranks = all_ranks


class InvalidArgumentType(InputError, TypeError):
    """An argument of the wrong type (a ``TypeError`` naming it; also an ``InputError``)."""


class InvalidArgumentValue(InputError, ValueError):
    """An argument with a bad value (a ``ValueError`` naming it; also an ``InputError``)."""


class GraphFormatError(InputError):
    """A malformed graph file. The message names the file and, where it applies, the line."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}", all_ranks=False)
        self.path = str(path)
        self.line = line


class ValidationError(Exception):
    """A traversal's result broke one of its Graph500 rules (BFS, SSSP) or the exact-distance
    check."""

    def __init__(self, rule: str, vertex: int, message: str) -> None:
        super().__init__(f"validation failed, {rule}: {message} (first offending vertex {vertex})")
        self.rule = rule
        self.vertex = vertex


class DeviceError(Exception):
    """The GPU backend cannot go on (out of memory, queue overflow, no device)."""


CUDA_OUT_OF_MEMORY = 2
"""cudaErrorMemoryAllocation: the status of a failed cudaMalloc. ``cupy.cuda.Memory`` (a whole
allocation of its own, as CUDA IPC maps) raises it as a ``CUDARuntimeError``; only CuPy's pool
raises ``OutOfMemoryError``."""


def out_of_device_memory(exc: BaseException) -> bool:
    """Whether ``exc`` says the GPU's memory ran out: CuPy's ``OutOfMemoryError`` (a
    ``MemoryError``) or a CUDA runtime error of status ``CUDA_OUT_OF_MEMORY``."""
    return isinstance(exc, MemoryError) or getattr(exc, "status", None) == CUDA_OUT_OF_MEMORY


@contextmanager
def agree_on_errors(comm: Communicator) -> Iterator[None]:
    """Run rank-local work, then agree collectively on whether any rank failed.

    Every rank must enter and leave the block (put no collective inside it that a failing rank
    could skip). If any rank raised an ``InputError``, every rank raises the error of the lowest
    failing rank, marked ``all_ranks``.
    """
    local: InputError | None = None
    try:
        yield
    except InputError as exc:
        local = exc
    messages = comm.allgather_object(None if local is None else str(local))
    first = next((i for i, m in enumerate(messages) if m is not None), None)
    if first is None:
        return
    if first == comm.rank and local is not None:
        local.all_ranks = True
        raise local
    raise InputError(messages[first], all_ranks=True)
