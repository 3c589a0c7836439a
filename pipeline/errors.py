"""One hierarchy for everything that ends a job early, and how the command line reports it.

    PipelineError
    ├── InputError         a bad file, column, option or output path: one line, exit code 2
    │   ├── CheckpointError    a checkpoint that cannot be resumed
    │   └── ReportError        a file that is not a result file
    ├── RunFailed          the workers or the cluster went away: one line, exit code 2
    └── RunInterrupted     Ctrl-C or SIGTERM: one line, exit code 130

`ExecutorLost` is what an executor raises when its workers are gone; a job turns it into
`RunFailed`, which says what was kept. Every message is one line, fit for `error: <message>`.
"""

from pathlib import Path


class PipelineError(Exception):
    """Any error a job reports to its caller in one line (`EXIT_CODE` for the CLI)."""

    EXIT_CODE = 2


class InputError(PipelineError):
    """A bad input file, column, option or output path: nothing was written."""


class CheckpointError(InputError):
    """A checkpoint that cannot be used: missing, damaged, or from another run."""


class ReportError(InputError):
    """A file that cannot be reported on: missing, not Parquet, not a result file."""


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
