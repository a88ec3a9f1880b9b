"""Result files written atomically and without gathering a result onto one rank.

``write_striped_npy``: a global per-vertex array (distances, predecessors) whose parts live on
their owners (vertex v on rank v % p, local row v // p). Rank 0 creates a temporary ``.npy``
next to the target with the final dtype and shape; every rank writes its own strided slice
(``mm[rank::size] = local``) through a memory map; rank 0 renames the file into place.
``write_json``: a small document written by rank 0 (``write_from_rank0``: any such file).
``make_parent_dirs``: the directories an output path needs. ``temp_name``: the hidden sibling
name an output is built under before its rename (the native graph writer's directory too).
Outputs are created with the permissions the umask gives.

Invariants: the target either keeps its previous state or holds the complete new file; no
temporary file survives a failure; every failure is agreed, so all ranks raise the same
``InputError`` naming the file.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable
from typing import Any

import numpy as np

from .comm.base import Communicator
from .errors import InputError, agree_on_errors


def temp_name(path: str) -> str:
    """A fresh hidden name in the target's directory (so the final rename is atomic)."""
    directory, base = os.path.split(os.path.abspath(path))
    return os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")


def _os_error(path: str, exc: OSError) -> InputError:
    reason = exc.strerror or str(exc)
    return InputError(f"{path}: cannot write: {reason}", all_ranks=False)


def _remove_quietly(path: str | None) -> None:
    if path is None:
        return
    try:
        os.remove(path)
    except OSError:
        pass


def _to_host(array: Any) -> np.ndarray:
    return (
        array.get()
        if hasattr(array, "get") and not isinstance(array, np.ndarray)
        else (np.asarray(array))
    )


def make_parent_dirs(
    path: str | os.PathLike[str], comm: Communicator, flag: str | None = None
) -> None:
    """Create the missing directories above ``path`` (rank 0; collective); ``flag``: the
    argument that named ``path``, for the message.

    Raises
    ------
    InputError
        On every rank, naming the directory, when it cannot be created.
    """
    directory = os.path.dirname(os.fspath(path))
    with agree_on_errors(comm):
        if comm.rank == 0 and directory:
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                where = f"{flag} {os.fspath(path)}: " if flag else ""
                raise InputError(
                    f"{where}{directory}: cannot create directory: {reason}", all_ranks=False
                ) from None


def prepare_output(prefix: str, comm: Communicator, flag: str = "--output") -> None:
    """Check, before any expensive work, that files ``PREFIX.*`` can be written: the missing
    directories above are created (rank 0) and the directory must be writable (collective;
    an ``InputError`` naming ``flag`` and the directory on every rank otherwise)."""
    make_parent_dirs(prefix, comm, flag)
    directory = os.path.dirname(os.path.abspath(prefix))
    with agree_on_errors(comm):
        if comm.rank == 0 and not os.access(directory, os.W_OK | os.X_OK):
            raise InputError(f"{flag} {prefix}: cannot write in {directory}", all_ranks=False)


def write_striped_npy(path: str | os.PathLike[str], local: Any, n: int, comm: Communicator) -> None:
    """Write a global array of ``n`` entries (rows, when ``local`` has more than one dimension)
    to ``path`` (``.npy``) from its striped parts.

    Collective. ``local`` holds this rank's entries in local order (global id
    ``rank + i * size`` at position ``i``); its dtype and row shape must be the same on every
    rank.

    Parameters
    ----------
    path : str or os.PathLike
        Target file; replaced atomically.
    local : array
        This rank's part (numpy or cupy; copied to the host).
    n : int
        Global length.
    comm : Communicator
        The job's communicator.

    Raises
    ------
    InputError
        On every rank, naming ``path``, when the file cannot be created or written.
    """
    path = os.fspath(path)
    host = _to_host(local)
    temp: str | None = None
    try:
        with agree_on_errors(comm):
            if comm.rank == 0:
                temp = temp_name(path)
                try:
                    created = np.lib.format.open_memmap(
                        temp, mode="w+", dtype=host.dtype, shape=(n, *host.shape[1:])
                    )
                    created.flush()
                    del created
                except OSError as exc:
                    _remove_quietly(temp)
                    temp = None
                    raise _os_error(path, exc) from None
        temp = comm.bcast_object(temp)
        with agree_on_errors(comm):  # its all-gather is the barrier before writing
            try:
                if host.shape[0]:
                    mm = np.lib.format.open_memmap(temp, mode="r+")
                    mm[comm.rank :: comm.size] = host
                    mm.flush()
                    del mm
            except OSError as exc:
                raise _os_error(path, exc) from None
        with agree_on_errors(comm):  # ... and the one after writing
            if comm.rank == 0:
                try:
                    os.replace(temp, path)
                except OSError as exc:
                    raise _os_error(path, exc) from None
                temp = None
    except BaseException:
        if comm.rank == 0:
            _remove_quietly(temp)
        raise


def write_from_rank0(
    path: str | os.PathLike[str], comm: Communicator, write: Callable[[str], None]
) -> None:
    """Rank 0 calls ``write(temp)`` to write the whole file under a temporary name, which then
    replaces ``path`` atomically (collective).

    Raises
    ------
    InputError
        On every rank, naming ``path``, when rank 0 cannot write it.
    """
    path = os.fspath(path)
    with agree_on_errors(comm):
        if comm.rank == 0:
            temp = temp_name(path)
            try:
                write(temp)
                os.replace(temp, path)
            except OSError as exc:
                _remove_quietly(temp)
                raise _os_error(path, exc) from None
            except BaseException:
                _remove_quietly(temp)
                raise


def write_json(path: str | os.PathLike[str], document: Any, comm: Communicator) -> None:
    """Write ``document`` as JSON to ``path`` from rank 0, atomically (collective)."""

    def write(temp: str) -> None:
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, sort_keys=False)
            handle.write("\n")

    write_from_rank0(path, comm, write)
