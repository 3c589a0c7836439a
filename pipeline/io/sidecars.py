"""The files a job keeps beside its output `NAME` while it runs, and what is stale of them.

    .NAME.lock                 `OutputLock`: one run per output
    .NAME.tmp-PID              `write_atomically`'s temporary file
    NAME.partial/              solve's checkpoint (`run.checkpoint`)
    .NAME.findings-PID.arrow   validate's findings spool

Their names must fit beside the output's (`check_name_room`, before any work). A file of a
process that has ended (a `kill -9`) is stale, and the next run clears it; a running
process's is its own. A lock file this tool did not make is never used or deleted.

A file is written to its temporary name, flushed to disk, then renamed over its destination
(`write_atomically`): readers see the old file or the whole new one, never a part, even after
`kill -9`; `fsync_dir` makes a rename durable. `copy_bytes` and `copy_range` copy a
file's bytes into another in the kernel (a join's parts into its output).
"""

import fcntl
import glob
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.errors import InputError

# What a job keeps beside an output `NAME` while it runs, a PID at its longest (Linux: 2**22)
LOCK, TEMPORARY, CHECKPOINT = ".{name}.lock", ".{name}.tmp-{pid}", "{name}.partial"
SPOOL = ".{name}.findings-{pid}.arrow"  # validate's findings, before they are sorted
BESIDE = (LOCK, TEMPORARY, CHECKPOINT, SPOOL)
_LONGEST_PID = 4_194_304
COPY_BLOCK = 1 << 22  # bytes a block, where the kernel cannot copy (`copy_bytes`)


def output_stat(path: str | Path, what: str) -> tuple[Path, os.stat_result | None]:
    """An output's path as it will be written, a symbolic link standing for its target (as
    `cp` and shells write through one), and what is there (None: nothing yet). Raises
    `InputError` when it cannot be looked at."""
    out = Path(path)
    if out.is_symlink():
        out = Path(os.path.realpath(out))
    try:
        return out, out.stat()
    except FileNotFoundError:
        return out, None
    except OSError as e:
        raise InputError(f"{out}: cannot use as the {what} ({e.strerror or e})") from None


def check_name_room(out: Path, what: str, option: str = "-o") -> None:
    """Refuse, before any work, an output whose folder cannot be written (a read-only mount,
    somebody else's folder: the default output goes beside the input), naming the `option`
    that places it; or an output name too long for the files kept beside it: the run would
    fail at its very end (joining into `.NAME.tmp-PID`), and `--resume` again."""
    folder = out.parent if str(out.parent) else Path(".")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(
            f"{folder}: cannot write the {what} there (read-only, or not yours); "
            f"give {option} a place you can write"
        )
    try:
        limit = os.pathconf(out.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    name = os.fsencode(out.name)
    room = max(len(os.fsencode(form.format(name="", pid=_LONGEST_PID))) for form in BESIDE)
    if len(name) + room > limit:
        cut = len(name) + room - limit
        raise InputError(
            f"{out}: the {what}'s name is too long: the files kept beside it add "
            f"{room} bytes to it, and a name here holds {limit}; choose a name "
            f"{cut} bytes shorter"
        )


def findings_spool(output: Path, pid: int | None = None) -> Path:
    """Where validate spools the findings of an `output` (`BESIDE`) for process `pid`."""
    pid = os.getpid() if pid is None else pid
    return output.with_name(SPOOL.format(name=output.name, pid=pid))


def temporary_name(path: Path, pid: int | None = None) -> Path:
    """The temporary file `write_atomically` writes `path` to, for process `pid` (this one)."""
    return path.with_name(TEMPORARY.format(name=path.name, pid=os.getpid() if pid is None else pid))


def fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, write: Callable[[Any], object]) -> None:
    """Call `write(file)` on a temporary file beside `path`, fsync it, and rename it to `path`:
    readers see the old file or the whole new one, never a part (a kill -9 included). An
    `OSError` of the writing (a full disk, a file-size limit) names `path`."""
    tmp = temporary_name(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        if e.filename is not None or e.errno is None:
            raise
        raise OSError(e.errno, e.strerror, str(path)) from None
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


def copy_bytes(source: Any, sink: Any, left: int, path: Path) -> None:
    """Copy `left` bytes from where the file `source` stands to where `sink` stands (`copy_range`),
    both left standing past them."""
    sink.flush()
    at, out = source.tell(), sink.tell()
    copy_range(source.fileno(), at, sink.fileno(), out, left, path)
    source.seek(at + left)
    sink.seek(out + left)


def copy_range(source: int, at: int, sink: int, out: int, left: int, path: Path) -> None:
    """Copy `left` bytes of the file `source` (a descriptor; `path`, for errors) from offset
    `at` into the file `sink` at offset `out`: in the kernel (`copy_file_range`: no byte
    through this process's memory; a reflink on file systems that share blocks) where it
    can, else a block at a time."""
    copy = getattr(os, "copy_file_range", None)
    while left and copy is not None:
        try:
            done = copy(source, sink, left, at, out)
        except OSError:  # another file system, or none that can: copy it here
            break
        if not done:
            raise OSError(f"{path}: shorter than it was")
        at, out, left = at + done, out + done, left - done
    while left:
        block = os.pread(source, min(left, COPY_BLOCK), at)
        if not block:
            raise OSError(f"{path}: shorter than it was")
        done = os.pwrite(sink, block, out)
        at, out, left = at + done, out + done, left - done


def process_alive(pid: int) -> bool:
    """Whether a process `pid` runs (on this machine)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # somebody else's process
        return True
    return True


def stale_files(folder: Path, prefix: str, suffix: str = "") -> list[Path]:
    """Files `PREFIX<pid>SUFFIX` in `folder` left by processes that have ended (a kill -9):
    those of a running process are its own, and left alone."""
    found = []
    for path in folder.glob(f"{glob.escape(prefix)}*{glob.escape(suffix)}"):
        pid = path.name[len(prefix) : len(path.name) - len(suffix)]
        if pid.isascii() and pid.isdigit() and not process_alive(int(pid)):
            found.append(path)
    return found


def clear_stale_temporaries(path: Path, forms: tuple[str, ...] = (TEMPORARY, SPOOL)) -> None:
    """Delete the files of one process that ended runs left beside `path` (see `stale_files`):
    its temporary file (`write_atomically`), validate's findings spool (`forms`)."""
    for form in forms:
        prefix, suffix = form.format(name=path.name, pid="\0").split("\0")
        for stale in stale_files(path.parent, prefix, suffix):
            stale.unlink(missing_ok=True)


class OutputLock:
    """An exclusive lock on an output while a job writes it (and its checkpoint): a second
    run on the same output refuses with one line instead of destroying the first one's work.

    The lock is a hidden file beside the output, `.NAME.lock` (`flock`ed; it says what it is
    and which process holds it), removed when the job ends. One a killed run left is taken
    over (no process holds its `flock`); a file of that name that this tool did not make is
    never used, written or deleted: the job refuses in one line.
    """

    def __init__(self, output: Path) -> None:
        self.path = output.with_name(LOCK.format(name=output.name))
        self._fd: int | None = None

    def __enter__(self) -> "OutputLock":
        for _ in range(10):  # the file may be removed between open and lock by a run ending
            fd, created = self._open()
            if fd is None:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                output = self.path.with_name(self.path.name[1 : -len(".lock")])
                raise InputError(
                    f"{output}: another run is writing this output; wait for it to end, or "
                    "choose another -o"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            if not created and not _is_our_lock(os.pread(fd, 4096, 0)):
                os.close(fd)
                raise InputError(
                    f"{self.path}: exists and was not made by sudoku-pipeline (it "
                    "keeps the output's lock there); will not use or delete it: "
                    "move it away, or choose another -o"
                )
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, _LOCK_MARK + f"pid {os.getpid()}\n".encode(), 0)
            except OSError as e:  # a full disk, say: leave nothing behind
                self.path.unlink(missing_ok=True)
                os.close(fd)
                raise InputError(
                    f"{self.path}: cannot lock the output ({e.strerror or e})"
                ) from None
            self._fd = fd
            return self
        raise InputError(f"{self.path}: cannot take the output's lock")

    def _open(self) -> tuple[int | None, bool]:
        """The lock file's descriptor (None: it went away meanwhile), and whether this call
        created it."""
        try:
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644), True
            except FileExistsError:
                return os.open(self.path, os.O_RDWR), False
        except FileNotFoundError:
            return None, False
        except OSError as e:
            raise InputError(
                f"{self.path}: cannot lock the output ({e.strerror or e}); give -o "
                "a place you can write"
            ) from None

    def __exit__(self, *exc: object) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            self.path.unlink(missing_ok=True)  # still holding the lock: no one else has it
            os.close(fd)


_LOCK_MARK = b"sudoku-pipeline output lock\n"


def _is_our_lock(content: bytes) -> bool:
    """Whether a lock file holds what this tool writes there: its mark, or a PID alone (an
    older version); or nothing (a kill -9 between creating and writing it)."""
    return (
        not content
        or content.startswith(_LOCK_MARK)
        or re.fullmatch(rb"\d+\n", content) is not None
    )
