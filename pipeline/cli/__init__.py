"""The `sudoku-pipeline` command line: `commands` (one function per command, each a thin layer
over the Python API), `options` (the file jobs' shared options), `help` (plain help, values
converted without pydantic) and `process` (signals, one-line errors, exit codes). Each job's
command is registered on the app by its module, which the job table names
(`pipeline.jobs.JOBS`: `command`)."""

import os
import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM while the program's modules load (half a second or more on a busy
    machine): nothing has been written yet, so end at once, in one line, as later."""
    os.write(2, b"error: interrupted\n")
    os._exit(130)


# Run as the program (the console script; not a spawned worker process, which is given the
# parent's argv, nor a test importing the app): the first signals are answered before typer
# and the jobs are imported, instead of a KeyboardInterrupt traceback out of an import.
# `process.take_signals()` hands them on to the command once it is loaded. A signal the
# program was started ignoring (nohup, `&` in a script) stays ignored.
_PROGRAM = sys.argv[0] if sys.argv else ""
if (
    (
        os.path.basename(_PROGRAM) == "sudoku-pipeline"
        or _PROGRAM.endswith((f"pipeline{os.sep}__main__.py", f"cli{os.sep}__main__.py"))
    )  # the console script, `python -m pipeline` or `python -m pipeline.cli`
    and "--multiprocessing-fork" not in sys.orig_argv  # how a spawned worker is started
):
    for _signal in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(_signal) is not signal.SIG_IGN:
            signal.signal(_signal, _interrupted_while_starting)

from importlib import import_module  # noqa: E402

from pipeline.cli.commands import app, main  # noqa: E402 - after the handlers, on purpose
from pipeline.jobs import JOBS  # noqa: E402

for _module in dict.fromkeys(job.command for job in JOBS.values() if job.command):
    import_module(f"pipeline.cli.{_module}")  # registers the job's command on the app

__all__ = ["app", "main"]
