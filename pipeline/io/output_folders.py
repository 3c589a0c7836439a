"""A folder of outputs written whole (a split's files, an HRM dataset): checked before any work,
written in a temporary folder beside it, put in its place at the end.

    folder = check_output_folder("splits/", "split", "split", inputs=["corpus.csv"],
                                 force=False, is_own=earlier_split)   # or InputError, one line
    with OutputLock(folder), folder_in_making(folder) as tmp:   # `.NAME.lock`, `.NAME.tmp-PID`
        ...                                                      # everything written in tmp
        put_in_place(tmp, folder)                                # flushed, renamed, whole

Refused: `-` (a folder cannot go to stdout); a path that is a file or anything but a folder; a
missing parent; a folder that holds an input; a folder with anything in it, unless it holds an
earlier output of the same kind and nothing else (`is_own`: a rerun replaces its own result)
or `force` -- and even then only a folder of what such a job could have written (Parquet and
JSON files, folders of `.npy` and `.json` files): somebody's other work is never deleted.
The output is written into `.NAME.tmp-PID` beside the folder, flushed to disk, then renamed
to it (an older folder is first moved to `.NAME.old-PID`, then deleted): readers see the old
folder or the whole new one. What a killed run left there is cleared by the next.
"""

import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.errors import InputError
from pipeline.io.array_folders import OLD, clear_stale_folders
from pipeline.io.sidecars import TEMPORARY, check_name_room
from pipeline.io.writers import fsync_dir


def check_output_folder(
    path: str | Path,
    what: str,
    command: str,
    *,
    inputs: Iterable[str | Path] = (),
    force: bool = False,
    is_own: Callable[[Path], bool],
) -> Path:
    """The output folder of a `what` (`split`, `HRM dataset`) that `command` writes, checked
    (see the module); a symbolic link stands for its target. Returns the path to write;
    raises `InputError`."""
    if str(path) == "-":
        raise InputError(f"{command} writes a folder of files, not stdout: give -o DIR")
    folder = Path(os.path.realpath(path)) if Path(path).is_symlink() else Path(path)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{path}: is a file, not a folder; {command} writes a folder: give -o DIR")
    if not folder.absolute().parent.is_dir():
        raise InputError(f"{folder.absolute().parent}: no such directory for the output folder")
    check_name_room(folder.absolute(), "output folder")
    for source in inputs:
        if Path(source).exists() and _inside(Path(source), folder):
            raise InputError(f"{path}: holds the input {source}; choose another -o")
    if folder.is_dir() and any(folder.iterdir()) and not is_own(folder):
        if not force:
            raise InputError(
                f"{path}: is not empty and holds no earlier {what}; use --force "
                "to replace it, or choose another -o"
            )
        if not holds_only_outputs(folder):
            raise InputError(
                f"{path}: holds files other than a {what}'s (.parquet, .json, "
                "folders of .npy); will not delete it, even with --force: choose "
                "another -o"
            )
    return folder


def holds_only_outputs(folder: Path) -> bool:
    """Whether `folder` holds nothing but what these jobs write (Parquet and JSON files,
    folders of `.npy` and `.json` files): what `--force` may delete."""

    def files(path: Path, suffixes: tuple[str, ...]) -> bool:
        return path.is_file() and not path.is_symlink() and path.name.endswith(suffixes)

    try:
        return all(
            files(entry, (".parquet", ".json"))
            or (
                entry.is_dir()
                and not entry.is_symlink()
                and all(files(inner, (".npy", ".json")) for inner in entry.iterdir())
            )
            for entry in folder.iterdir()
        )
    except OSError:
        return False


def _inside(file: Path, folder: Path) -> bool:
    try:
        return Path(os.path.realpath(file)).is_relative_to(os.path.realpath(folder))
    except OSError:
        return False


@contextmanager
def folder_in_making(folder: Path) -> Iterator[Path]:
    """The temporary folder beside `folder` (`.NAME.tmp-PID`) that the output is written into;
    removed on leaving, whatever happened (after `put_in_place` renamed it, there is nothing
    left to remove). What killed runs left is cleared first."""
    parent = folder.absolute().parent
    clear_stale_folders(folder.absolute())  # what runs killed mid-way left
    tmp = parent / TEMPORARY.format(name=folder.name, pid=os.getpid())
    old = parent / OLD.format(name=folder.name, pid=os.getpid())
    try:
        tmp.mkdir()
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def put_in_place(tmp: Path, folder: Path) -> None:
    """Flush everything in `tmp` (`folder_in_making`) to disk, then put it in `folder`'s place
    (an older folder set aside first, then deleted). `OSError` (a full disk) names what
    failed."""
    parent = folder.absolute().parent
    old = parent / OLD.format(name=folder.name, pid=os.getpid())
    _fsync_tree(tmp)
    if folder.is_dir():
        folder.rename(old)
    tmp.rename(folder)
    fsync_dir(parent)
    shutil.rmtree(old, ignore_errors=True)


def _fsync_tree(top: Path) -> None:
    for path in sorted(top.rglob("*"), reverse=True):
        if path.is_file():
            with open(path, "rb+") as f:
                os.fsync(f.fileno())
        else:
            fsync_dir(path)
    fsync_dir(top)
