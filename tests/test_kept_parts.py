"""Reading a checkpoint folder changes nothing (pipeline/run/kept_parts.py): a part Dask kept
twice (a slice run twice: the same rows, other timings, so another checksum and name) is
listed once and reported as a repeat; only resuming or joining deletes it."""

from pathlib import Path

import pytest

from pipeline.errors import CheckpointError, InputError
from pipeline.run.checkpoint import Checkpoint
from pipeline.run.kept_parts import check_folder_is_ours, list_parts


def _part(folder: Path, start: int, rows: int, crc: str) -> Path:
    path = folder / f"part-{start:012d}-{rows}-0-{start}-{crc}.parquet"
    path.write_bytes(b"PAR1")
    return path


def test_a_part_kept_twice_is_listed_once_and_nothing_is_deleted(tmp_path: Path) -> None:
    checkpoint = Checkpoint(tmp_path / "out.parquet", "parquet")
    checkpoint.start({"inputs": []})
    first = _part(checkpoint.folder, 0, 10, "0000000a")
    again = _part(checkpoint.folder, 0, 10, "0000000b")
    later = _part(checkpoint.folder, 10, 5, "0000000c")

    parts, repeats = list_parts(checkpoint.folder, "parquet")
    held = checkpoint.held()

    assert [p.path for p in parts] == [first, later] and repeats == [again]
    assert [name for name, *_ in held] == [first.name, later.name]
    assert first.exists() and again.exists() and later.exists()


def test_a_file_named_as_a_part_of_another_format_is_refused(tmp_path: Path) -> None:
    (tmp_path / "part-000000000000-10-0-0-0000000a.csv").write_text("x\n")
    with pytest.raises(CheckpointError, match="not a part this tool writes"):
        list_parts(tmp_path, "parquet")


def test_a_folder_holding_anything_else_is_not_ours(tmp_path: Path) -> None:
    folder = tmp_path / "out.parquet.partial"
    folder.mkdir()
    (folder / "run.json").write_text("{}")
    check_folder_is_ours(folder)  # a run's own files
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="holds notes.txt"):
        check_folder_is_ours(folder)


def test_the_scratch_of_a_sharded_validate_is_ours(tmp_path: Path) -> None:
    """What a validate on Dask killed mid-run leaves (`jobs.validate.sharded`) is cleared by
    the next run, not refused."""
    folder = tmp_path / "out.findings.parquet.partial"
    folder.mkdir()
    (folder / "run.json").write_text("{}")
    for name in ("shard-checks-000003.arrow", "shard-keys-000000.arrow",
                 "shard-repeats-000012.arrow", ".shard-forms-000001.arrow.tmp-4242"):  # fmt: skip
        (folder / name).write_bytes(b"")
    check_folder_is_ours(folder)
    (folder / "shard-keys-1.arrow.bak").write_bytes(b"")
    with pytest.raises(InputError, match="holds shard-keys-1.arrow.bak"):
        check_folder_is_ours(folder)
