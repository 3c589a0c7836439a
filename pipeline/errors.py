"""One hierarchy for everything that ends a job early, each with the exit code it ends a
program with.

    PipelineError
    ├── InputError         a bad file, column, option or output path: one line, exit code 2;
    │   │                  also a ValueError, as Python's own bad arguments are
    │   ├── InputNotFoundError  an input that is not there: also a FileNotFoundError
    │   ├── CheckpointError     a checkpoint that cannot be resumed
    │   └── ReportError         a file that is not a result file
    │       └── ResultNotFoundError   (and an InputNotFoundError) a result file not there
    ├── RunFailed          the workers or the cluster went away: one line, exit code 2
    └── RunInterrupted     Ctrl-C or SIGTERM: one line, exit code 130

`ExecutorLost` is what an executor raises when its workers are gone; a job turns it into
`RunFailed`, which says what was kept. Every message is one line, fit for `error: <message>`.
The public ones are exported from `pipeline` (`except pipeline.InputError`), and caught the
usual way too: `except ValueError`, `except FileNotFoundError` (`except OSError`) for a missing
file.
"""

import errno
from pathlib import Path


class PipelineError(Exception):
    """Any error a job reports to its caller in one line; `EXIT_CODE`: the exit code of a
    program it ends."""

    EXIT_CODE = 2


class InputError(PipelineError, ValueError):
    """A bad input file, column, option or output path: nothing was written."""


class InputNotFoundError(InputError, FileNotFoundError):
    """An input that is not there (a file, a glob that matches nothing): `errno` ENOENT and
    `filename` as an `OSError` has them; its message is one line."""

    def __init__(self, message: str, filename: str | Path | None = None) -> None:
        super().__init__(message)
        self.errno = errno.ENOENT
        self.strerror = message
        self.filename = None if filename is None else str(filename)

    def __str__(self) -> str:  # an OSError with a filename would say `[Errno 2] ...: 'name'`
        return str(self.args[0])

    def __reduce__(self) -> tuple:  # across a worker process's pipe, the filename too
        return type(self), (self.args[0], self.filename)


class CheckpointError(InputError):
    """A checkpoint that cannot be used: missing, damaged, or from another run."""


class ReportError(InputError):
    """A file that cannot be reported on: missing, not Parquet, not a result file."""


class ResultNotFoundError(ReportError, InputNotFoundError):
    """A result file to report on that is not there."""


class ExecutorLost(PipelineError):
    """The workers or the cluster went away mid-run (a killed worker process, a Dask
    scheduler gone)."""


class RunFailed(PipelineError):
    """A job ended because its workers or cluster went away; says what was kept."""

    def __init__(self, reason: str, rows_done: int | None = None, kept: Path | None = None) -> None:
        if kept is None:
            message = f"{reason}; nothing is kept: run the same command again"
        else:
            message = (
                f"{reason}; {rows_done or 0:,} rows done are kept in {kept}; "
                "run the same command with --resume to continue"
            )
        super().__init__(message)


class RunInterrupted(PipelineError):
    """Ctrl-C (or SIGTERM) stopped a job; says what was kept."""

    EXIT_CODE = 130

    def __init__(self, rows_done: int | None = None, kept: Path | None = None) -> None:
        self.rows_done = rows_done
        self.checkpoint = kept
        if kept is None:
            message = "interrupted"
        else:
            message = (
                f"interrupted: {rows_done or 0:,} rows done are kept in {kept}; "
                "run the same command with --resume to continue"
            )
        super().__init__(message)


def first_line(error: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none), for a
    one-line error."""
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def printable(text: str) -> str:
    """`text` as one printable line, for `error: ...` and `note: ...`: a control character
    (a file may be named `a\\nb.csv`) written as Python escapes it (`\\n`, `\\x07`), and a byte
    of a file name that is not UTF-8 (a surrogate escape in Python's `str`) as `\\xe9`."""
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char.isprintable():
            out.append(char)
        elif "\udc80" <= char <= "\udcff":  # os.fsdecode's escape of the byte 0x80-0xff
            out.append(f"\\x{ord(char) - 0xDC00:02x}")
        else:
            out.append(char.encode("unicode_escape").decode("ascii"))
    return "".join(out)
