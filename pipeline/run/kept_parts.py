"""What a checkpoint folder holds, read without changing it (`checkpoint.py` changes it).

    parts, repeats = list_parts(folder, "parquet")   # by row; a part kept twice: in repeats
    check_folder_is_ours(folder)                     # InputError unless only a run's files
    check_part(part, "parquet")                      # CheckpointError unless whole
    noted = noted_counts(folder)                     # part name -> its verdict counts

A part is named `part-START-ROWS-SOURCE-FIRSTROW-CRC32.EXT` (`parts.keep_part`): its first
row, its rows, the input and row it starts at, and the checksum of its bytes. `run.json` says
what the run is; `counts.jsonl` notes each part's counts as it is kept; `join.jsonl` and
`joined.EXT` are the join's (`join.py`).
"""

import json
import re
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import CheckpointError, InputError
from pipeline.io.parquet_concat import ParquetFooterError, parse_footer
from pipeline.io.writers import EXTENSIONS

META = "run.json"
COUNTS = "counts.jsonl"  # each part's verdict counts, noted as it is kept
START_OVER = "run without --resume to start over"
_PART = re.compile(r"part-(\d{12})-(\d+)-(\d+)-(\d+)-([0-9a-f]{8})\.(parquet|csv|jsonl|arrays)")
_OWN_TEMPORARY = re.compile(r"\.(run\.json|part-.+|shard-.+)\.tmp-\d+")
# `shard-...`: the scratch of a job whose whole-corpus steps run on the workers (`run.scratch`)
_OWN = re.compile(
    r"run\.json|counts\.jsonl|join\.jsonl|joined\.(parquet|csv|jsonl)"
    r"|shard-[a-z]+-\d+\.(arrow|parquet|zst|arrays)"
)


@dataclass(frozen=True)
class StoredPart:
    """A part kept in a checkpoint folder, as its name describes it."""

    path: Path
    start: int
    rows: int
    source: int
    first_row: int
    crc: int


def list_parts(folder: Path, fmt: str) -> tuple[list[StoredPart], list[Path]]:
    """The parts kept in `folder`, by row, and those kept twice (a task that ran twice: its
    rows are the same, its timings, and so its checksum, not), which only the first stands
    for. A file named as a part but not one of `fmt` is a `CheckpointError`."""
    parts = []
    for path in folder.glob("part-*"):
        match = _PART.fullmatch(path.name)
        if match is None or match.group(6) != EXTENSIONS[fmt]:
            raise CheckpointError(f"{path}: not a part this tool writes; {START_OVER}")
        start, rows, source, first = (int(g) for g in match.groups()[:4])
        parts.append(StoredPart(path, start, rows, source, first, int(match.group(5), 16)))
    parts.sort(key=lambda p: (p.start, p.path.name))
    unique: list[StoredPart] = []
    repeats: list[Path] = []
    for part in parts:
        if unique and (unique[-1].start, unique[-1].rows) == (part.start, part.rows):
            repeats.append(part.path)
        else:
            unique.append(part)
    return unique, repeats


def check_folder_is_ours(folder: Path) -> None:
    """Refuse (`InputError`, one line) a `<output>.partial` that is not a checkpoint of this
    tool: starting over deletes the folder, so it must hold nothing but what a run writes
    there (`run.json`, parts, their temporary names); an empty folder is what a kill -9
    before `run.json` leaves. No folder at all is fine."""
    try:
        info = folder.lstat()
    except FileNotFoundError:
        return
    except OSError as e:
        raise InputError(f"{folder}: cannot use as the checkpoint ({e.strerror or e})") from None
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(
            f"{folder}: exists and is not a checkpoint of sudoku-pipeline "
            "(not a folder); move it away, or choose another -o"
        )
    entries = list(folder.iterdir())
    has_meta = any(p.name == META for p in entries)
    for path in entries:
        own = path.name == META or (has_meta and path.name.startswith("part-"))
        own = own or (has_meta and _OWN.fullmatch(path.name) is not None)
        own = own or _OWN_TEMPORARY.fullmatch(path.name) is not None
        if not own or not stat.S_ISREG(path.lstat().st_mode):
            raise InputError(
                f"{folder}: exists and is not a checkpoint of sudoku-pipeline (it "
                f"holds {path.name}); will not delete it: move it away, or choose another -o"
            )


def check_part(part: StoredPart, fmt: str) -> None:
    """A kept part is whole: its bytes match the checksum in its name, and a Parquet part's
    footer reads and counts the rows its name says."""
    try:
        data = part.path.read_bytes()
    except OSError as e:
        raise CheckpointError(f"{part.path}: cannot read ({e.strerror}); {START_OVER}") from None
    if zlib.crc32(data) != part.crc:
        raise CheckpointError(f"{part.path}: damaged (checksum differs); {START_OVER}")
    if fmt == "parquet":
        try:
            rows = parse_footer(data, len(data)).num_rows
        except ParquetFooterError as e:
            raise CheckpointError(f"{part.path}: damaged ({e}); {START_OVER}") from None
        if rows != part.rows:
            raise CheckpointError(f"{part.path}: holds {rows} rows, not {part.rows}; {START_OVER}")


def noted_counts(folder: Path) -> dict[str, dict[str, int]]:
    """Each kept part's verdict counts, as noted when it was kept (by part name); a line a
    crash cut short is skipped (the part's counts are then read back from it)."""
    try:
        lines = (folder / COUNTS).read_text().splitlines()
    except FileNotFoundError:
        return {}
    noted = {}
    for line in lines:
        try:
            entry = json.loads(line)
            noted[str(entry["part"])] = {str(k): int(v) for k, v in entry["counts"].items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return noted


__all__ = [
    "COUNTS",
    "META",
    "START_OVER",
    "StoredPart",
    "check_folder_is_ours",
    "check_part",
    "list_parts",
    "noted_counts",
]
