"""A split's output folder: checked before any work, written whole or not at all.

    folder = check_folder("splits/", inputs=["corpus.csv"], force=False)   # or InputError
    with OutputLock(folder), folder_in_making(folder) as tmp:  # `.NAME.lock`, `.NAME.tmp-PID`
        ...                                        # the splits written in tmp (`spill`)
        commit_folder(tmp, folder, manifest)       # renamed into place, whole

`npy`: a folder `<name>/` per split, written by `io.array_folders` as augment writes its own (one
`.npy` per column, `puzzle` and `solution` as `(n, 81) uint8`, and its `meta.json`). `hrm`: a
folder `<name>/` per split in HRM's layout (`io.hrm_folders`), and `identifiers.json`.

Refused: `-` (a folder cannot go to stdout); a path that is a file or anything but a folder; a
missing parent; a folder that holds an input; a folder with anything in it, unless it holds an
earlier split of this tool and nothing else (a rerun replaces its own result) or `force` --
and even then only a folder of what a split could have written (Parquet and JSON files,
folders of `.npy`): somebody's other work is never deleted. The
splits are written into `.NAME.tmp-PID` beside the folder, flushed to disk, then renamed to
it (an older folder is first moved to `.NAME.old-PID`, then deleted): readers see the old
folder or the whole new one. What a killed run left there is cleared by the next.
"""

import json
import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.errors import InputError
from pipeline.io.array_folders import OLD, clear_stale_folders
from pipeline.io.hrm_folders import IDENTIFIERS
from pipeline.io.sidecars import TEMPORARY, check_name_room
from pipeline.io.writers import fsync_dir
from pipeline.jobs.split.manifest import MANIFEST, TOOL, SplitManifest, sha256_of


def check_folder(path: str | Path, *, inputs: Iterable[str] = (), force: bool = False) -> Path:
    """The output folder, checked (see the module's docstring). Raises `InputError`."""
    if str(path) == "-":
        raise InputError("split writes a folder of files, not stdout: give -o DIR")
    folder = Path(os.path.realpath(path)) if Path(path).is_symlink() else Path(path)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{path}: is a file, not a folder; split writes a folder: give -o DIR")
    if not folder.absolute().parent.is_dir():
        raise InputError(f"{folder.absolute().parent}: no such directory for the output folder")
    check_name_room(folder.absolute(), "output folder")
    for source in inputs:
        if Path(source).exists() and _inside(Path(source), folder):
            raise InputError(f"{path}: holds the input {source}; choose another -o")
    if folder.is_dir() and any(folder.iterdir()) and not _own_split(folder):
        if not force:
            raise InputError(
                f"{path}: is not empty and holds no earlier split; use --force "
                "to replace it, or choose another -o"
            )
        if not _split_like(folder):
            raise InputError(
                f"{path}: holds files other than a split's (.parquet, .json, "
                "folders of .npy); will not delete it, even with --force: choose "
                "another -o"
            )
    return folder


def _split_like(folder: Path) -> bool:
    """Whether `folder` holds nothing but what a split could have written (Parquet and JSON
    files, folders of `.npy` and `.json` files): what `--force` may delete."""

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


def _own_split(folder: Path) -> bool:
    """Whether `folder` holds an earlier split of this tool and nothing else."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        files = {MANIFEST, *manifest["files"]}
        ours = manifest.get("tool") == TOOL and manifest.get("command") == "split"
        return ours and {p.name for p in folder.iterdir()} <= files
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def files_of(names: tuple[str, ...] | list[str], fmt: str) -> list[str]:
    """The files (or npy and hrm folders) a split writes in its folder, beside
    `manifest.json` (hrm: `identifiers.json` too)."""
    if fmt == "parquet":
        return [f"{name}.parquet" for name in names]
    return [*names, *([IDENTIFIERS] if fmt == "hrm" else [])]


@contextmanager
def folder_in_making(folder: Path) -> Iterator[Path]:
    """The temporary folder beside `folder` (`.NAME.tmp-PID`) that a split is written into
    (its spilled rows too); removed on leaving, whatever happened (after `commit_folder`
    renamed it, there is nothing left to remove). What killed runs left is cleared first."""
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


def commit_folder(tmp: Path, folder: Path, manifest: SplitManifest) -> None:
    """Finish the splits written in `tmp` (`folder_in_making`): the manifest, with every
    file's sha256, flushed to disk with them, then `tmp` put in `folder`'s place (an older
    folder set aside first, then deleted). `OSError` (a full disk) names what failed."""
    parent = folder.absolute().parent
    old = parent / OLD.format(name=folder.name, pid=os.getpid())
    manifest.sha256 = {
        str(f.relative_to(tmp)): sha256_of(f) for f in sorted(tmp.rglob("*")) if f.is_file()
    }
    (tmp / MANIFEST).write_text(manifest.to_json() + "\n")
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
