"""The command line: ``python -m distbfs`` (or ``distbfs``) with subcommands (``parser``), run
by their handlers (``commands``, ``bench``), and the error policy of every run (``main``).

``bench`` (also what runs without a subcommand: the embedded Graph500-style job), ``bfs``,
``generate``, ``convert`` and ``info``. Every rank of an MPI job runs the same command and takes
part in the work; only rank 0 prints results and progress bars.

Invariants on bad input (a flag, an argument, a file, a source out of range): exactly one line
``distbfs: error: <message>`` naming the argument or ``file:line`` and the bad value, on stderr,
printed once, exit status 2 on every rank, no traceback, and no rank left waiting:

- argparse errors and other errors every rank knows (``InputError.all_ranks``): rank 0 prints
  (``launcher_rank()`` before MPI starts), every rank returns 2 (``mpiexec`` then exits 2);
- a rank-local ``InputError`` that escaped agreement: that rank prints and calls ``abort(2)``
  (MPICH's ``mpiexec`` exits with the abort code);
- ``ValidationError`` (raised alike on every rank): rank 0 prints, exit 1;
- anything else is a bug: the traceback on the failing rank, then ``abort(1)`` in a job of several
  ranks (exit 1 otherwise); Ctrl-C ends the job with 130.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from ..comm.base import Communicator
from ..errors import EXIT_INPUT_ERROR, DeviceError, InputError, ValidationError
from ..launcher import launcher_rank
from ..runtime import resolve_backend, resolve_comm
from .bench import cmd_bench
from .commands import (
    Context,
    cmd_apsp,
    cmd_bfs,
    cmd_convert,
    cmd_generate,
    cmd_info,
    cmd_sssp,
    cmd_warmup,
)
from .components import cmd_cc
from .parser import (
    DEFAULT_ROOTS,
    DEFAULT_SCALE_CPU,
    DEFAULT_SCALE_GPU,
    GENERATOR_CHOICES,
    PROG,
    ParserExit,
    build_parser,
    parse_args,
)
from .reorder import cmd_reorder
from .tables import format_level_table

EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130

COMMANDS = {
    "bench": cmd_bench,
    "bfs": cmd_bfs,
    "sssp": cmd_sssp,
    "apsp": cmd_apsp,
    "cc": cmd_cc,
    "generate": cmd_generate,
    "convert": cmd_convert,
    "info": cmd_info,
    "reorder": cmd_reorder,
    "warmup": cmd_warmup,
}
"""The handler of each subcommand."""


def _error_line(message: object) -> str:
    text = " ".join(str(message).split("\n")).strip()
    return f"{PROG}: error: {text}"


def _print_err(line: str) -> None:
    sys.stdout.flush()
    print(line, file=sys.stderr, flush=True)


def out_of_memory(where: str, exc: BaseException) -> str:
    """The one line for an allocation that failed although the estimates let the work start."""
    detail = f" ({exc})" if str(exc) else ""
    return (
        f"out of {where} memory{detail}: run on more ranks or GPUs (mpiexec -n P), a smaller "
        "graph, or the numpy backend (--backend numpy) where the device is the limit"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    Every rank of an MPI job calls it with the same arguments.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    comm: Communicator | None = None

    def rank() -> int:
        return comm.rank if comm is not None else launcher_rank()

    def several() -> bool:
        return comm is not None and comm.size > 1

    try:
        try:
            args = parse_args(argv)
        except ParserExit as done:
            return done.status
        backend = resolve_backend(args.backend)
        comm = resolve_comm(args.comm, backend)
        return int(COMMANDS[args.command](Context(args, comm, backend)))
    except InputError as exc:
        if exc.all_ranks:
            if rank() == 0:
                _print_err(_error_line(exc))
            return EXIT_INPUT_ERROR
        _print_err(_error_line(exc))
        if several():
            comm.abort(EXIT_INPUT_ERROR)
        return EXIT_INPUT_ERROR
    except ValidationError as exc:
        if rank() == 0:
            _print_err(_error_line(exc))
        return EXIT_FAILURE
    except DeviceError as exc:  # may be one rank's device only
        _print_err(_error_line(exc))
        if several():
            comm.abort(EXIT_FAILURE)
        return EXIT_FAILURE
    except MemoryError as exc:  # past the estimates: this rank's host (or, CuPy's, GPU) ran out
        where = "device" if type(exc).__name__ == "OutOfMemoryError" else "host"
        _print_err(f"{PROG}: error: {out_of_memory(where, exc)}")
        if several():
            comm.abort(EXIT_INPUT_ERROR)
        return EXIT_INPUT_ERROR
    except BrokenPipeError:  # stdout closed early (a pager, `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        if several():
            comm.abort(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    except Exception:
        sys.stdout.flush()
        prefix = f"[rank {rank()}] " if several() else ""
        print(f"{prefix}{PROG}: internal error (a bug), traceback follows:", file=sys.stderr)
        traceback.print_exc()
        sys.stderr.flush()
        if several():
            comm.abort(EXIT_FAILURE)
        return EXIT_FAILURE


__all__ = [
    "DEFAULT_ROOTS",
    "DEFAULT_SCALE_CPU",
    "DEFAULT_SCALE_GPU",
    "GENERATOR_CHOICES",
    "build_parser",
    "cmd_info",
    "format_level_table",
    "main",
    "parse_args",
]
