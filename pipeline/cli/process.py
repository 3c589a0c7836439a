"""The command as a process: how it ends.

Every error is one line on stderr, `error: ...`, with the exit code it calls for: usage errors
and bad files 2, lost workers 2, Ctrl-C and SIGTERM 130 (`one_line_errors`, `fail`); a closed
pipe (`... | head`) ends quietly with 141; and once a job has run, the program ends without
Python's module teardown (`leave`).
"""

import atexit
import errno
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer

from pipeline.errors import PipelineError, printable
from pipeline.run.executors import WORKER_THREAD

AS_PROGRAM = False  # set by `main()`: the process is the command (not a test's CliRunner)
EXIT_BROKEN_PIPE = 141  # what a shell reports for a program that met a closed pipe (SIGPIPE)
EXIT_INTERRUPTED = 130
_reported = False  # `fail` printed the command's one line


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def take_signals() -> None:
    """From here on Ctrl-C and SIGTERM are a KeyboardInterrupt wherever they come (the jobs
    keep what they finished, and say so in one line), unless the program was started
    ignoring them."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _terminated)


def interrupted_silently(code: object) -> bool:
    """Whether the program is ending with 130 and no line said why: typer turns a
    KeyboardInterrupt outside a command's `one_line_errors` (while the options are parsed,
    say) into a silent exit 130."""
    return code == EXIT_INTERRUPTED and not _reported


def fail(message: str, code: int = 2) -> NoReturn:
    """End the command: `error: message` on stderr, exit `code`. The message stays one line
    whatever names it holds: control characters are escaped (`printable`).

    A job stopped mid-batch (Ctrl-C, a lost cluster) may leave a worker thread inside a kernel
    or inside pyarrow: the process then ends at once instead of letting the interpreter shut
    down under it (CPython ends such daemon threads in a way C++ code can turn into an abort).
    """
    global _reported
    typer.echo(f"error: {printable(message)}", err=True)
    _reported = True
    busy = any(t.name.startswith(WORKER_THREAD) and t.is_alive() for t in threading.enumerate())
    if busy and AS_PROGRAM:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise typer.Exit(code)


def _quiet_broken_pipe() -> NoReturn:
    """The reader of stdout went away (`| head`): stop without a word, as Unix tools do."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # nothing left to flush into the closed pipe
    raise typer.Exit(EXIT_BROKEN_PIPE)


def leave(status: object) -> NoReturn:
    """End the program with `status` (a `SystemExit` code), skipping Python's module teardown.

    Once a job has run, numba, pyarrow and pydantic are loaded, and tearing their modules down
    takes ~0.13 s, more than solving the 3,000-row sample (its warm run: 0.66 s -> 0.54 s). The
    exit handlers still run (tqdm's monitor, multiprocessing, Dask) and the standard streams are
    flushed; while a non-daemon thread still runs, the normal shutdown waits for it as usual.
    """
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if not isinstance(status, int | None) or any(not t.daemon for t in others):
        raise SystemExit(status)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):  # the reader went away; nothing more to tell it
        status = status or EXIT_BROKEN_PIPE
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(status or 0)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Every error a command meets, as one line on stderr and the exit code it calls for."""
    try:
        yield
    except PipelineError as e:
        fail(str(e), e.EXIT_CODE)
    except KeyboardInterrupt:  # at a moment the job could not tell what it kept
        fail("interrupted", 130)
    except BrokenPipeError:
        _quiet_broken_pipe()
    except OSError as e:
        if e.errno == errno.EPIPE:
            _quiet_broken_pipe()
        fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))
