"""A split's output folder: checked before any work, written whole or not at all, with the rules
every folder written whole follows (`io.output_folders`: nothing that is not an earlier split
is written over without `--force`, and nothing but a split's kind of files even with it).

    folder = check_folder("splits/", inputs=["corpus.csv"], force=False)   # or InputError
    with running(job) as run:                    # the run loop's `folder` sink: `.NAME.lock`,
        ...                                      # the splits written in run.folder (`spill`)
        write_manifest(run.folder, manifest, digests)   # with every file's sha256
        run.commit()                             # renamed into place, whole

`npy`: a folder `<name>/` per split, written by `io.writers` as augment writes its own (one
`.npy` per column, `puzzle` and `solution` as `(n, 81) uint8`, and its `meta.json`). `hrm`: a
folder `<name>/` per split in HRM's layout (`io.hrm_folders`), and `identifiers.json`. An
earlier split (its `manifest.json` says so, and the folder holds nothing it does not list) is
replaced by a rerun.
"""

import json
from collections.abc import Iterable
from pathlib import Path

from pipeline.io.hrm_folders import IDENTIFIERS
from pipeline.io.output_folders import check_output_folder
from pipeline.jobs.split.manifest import MANIFEST, TOOL, Digests, SplitManifest


def check_folder(path: str | Path, *, inputs: Iterable[str] = (), force: bool = False) -> Path:
    """The output folder, checked (see `io.output_folders`). Raises `InputError`."""
    return check_output_folder(
        path, "split", "split", inputs=inputs, force=force, is_own=_own_split
    )


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


def written_files(tmp: Path, names: Iterable[str] = ()) -> list[Path]:
    """The files in `tmp` (the folder being made), or in those of its entries named (a split's
    file or folder), in order."""
    places = [tmp / name for name in names] if names else [tmp]
    found = [f for place in places for f in sorted(place.rglob("*")) if f.is_file()]
    return found + [p for p in places if p.is_file()]


def write_manifest(tmp: Path, manifest: SplitManifest, digests: Digests) -> None:
    """The manifest of the splits written in `tmp` (the folder being made), with every
    file's sha256 (`digests`: started as each split was written)."""
    files = written_files(tmp)
    sums = digests.of(files)
    manifest.sha256 = {str(f.relative_to(tmp)): d for f, d in zip(files, sums, strict=True)}
    (tmp / MANIFEST).write_text(manifest.to_json() + "\n")
