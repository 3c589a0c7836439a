"""`split_file` in bounded memory: the kept rows spilled to temporary parts and each split
sorted by hash buckets give the same bytes as the split that held every row (the sha256s
below were taken from that split, before the streaming one replaced it), with one bucket or
many, and leave nothing behind."""

import hashlib

import polars as pl
import pytest

import pipeline
from pipeline.jobs.split import spill, split_file
from pipeline.run.job import Job
from tests.test_split import CORPUS

# sha256 of every file (the manifest aside: it holds times) written by the in-memory split,
# with the run's metadata fixed, for split_file(corpus, seed=5, batch_size=37, ...). The
# Parquet files' were taken again when the splits came to be written by the one writer
# (`io.writers`, page checksums included, in place of polars' sink_parquet): the same rows
# and schema, other bytes.
EXPECTED = {
    "clues": {
        "test.parquet": "1a599cac5fe8df5fdc58a9e052c3e737b6552a4e96a439558e68da2ea0e29908",
        "train.parquet": "c737b78c95efa019dad4d60bfce1ecd98d1cb9490d20d107dfe82ee112001da4",
    },
    "npy": {
        "test/clues.npy": "58a277c30294a03366d913db773b892ab4c4402c9ede46ab2a9eec6ce60c0324",
        "test/group.npy": "7b71acfd2aa49f93af3aeb7920fd2ded1da2475ef2422c1c9ac5e18f465d7921",
        "test/meta.json": "571b35a7b7fca649de12961afef221a42b4933ae5c4371d678b58a2b93902125",
        "test/puzzle.npy": "93894dbb4d72df2c3003deb4387d2e9a4650fe5a5757b585355d600dc94697d0",
        "test/row.npy": "4ea93161d43c019289e2f7b34b7c90f14573804f06a6b27b3881f9d493414867",
        "test/solution.npy": "dd0be3c1d0076b7f944010cdc3ebf6a9f993615ee6f5957ff998dea85fb1a0b8",
        "train/clues.npy": "535eb74417b28a86f25c725ce2662d910257cec24b5dfa5722d1159bc0b49ae3",
        "train/group.npy": "210fe24c960b2b86a0918a51a4578d4a1543d95d4607a578bd91dc341a6dc986",
        "train/meta.json": "6e1c4204e1bcf12903d13b0a66d0095bac463f7b01c2340f4e5c3dac408c1505",
        "train/puzzle.npy": "0393c677e3109dd7cdfa06d7a5347a726d80abf40cb1d667fb4a516c33a3dce3",
        "train/row.npy": "fec1d21676a512c58c18559a5d582355673469f7d28de56768c1fac0c866335b",
        "train/solution.npy": "d6ff927d20307bde4b56eec504c49727ccae632159b9b0ed50d19f9af34cc6d6",
        "val/clues.npy": "103d9a079ef23f52d818d2316b1c9238ea75f785484a4445989755384a73d902",
        "val/group.npy": "f6daaf7f566647ff3d476726a14a356690a21d3472df753dfb12a48504f55416",
        "val/meta.json": "3a6bf4518b53993e62641dbd107b57d4d971de5fb7cb9240553a908e00fa681e",
        "val/puzzle.npy": "0e47440578069d77d040302992fb9de2ebdc1cf7e010e654ba1a8909589cbbde",
        "val/row.npy": "0df8e8082ae99e0e614a8d8bdffeb16cc90a0d2c3e510f77245e7444f906f823",
        "val/solution.npy": "e77afa83f6f891142368b064c7aab28ca985499ccc7d92a0797d84ca07389b41",
    },
    "parquet": {
        "test.parquet": "3f14f9f980edab1811a2e3904c6b9438f495fa10d77d54f4d259050c48f9eae0",
        "train.parquet": "e04cbb0c5d0583d372097b7c2dd5f20485a95fbeec15ebf608592284b4a73353",
        "val.parquet": "ba5896e25ed41775b778bb57ec532970b3d641de18aeef3a34263834167d73c2",
    },
}
RUNS = {
    "parquet": dict(fractions="0.5,0.25,0.25"),
    "npy": dict(fractions="0.5,0.25,0.25", format="npy"),
    "clues": dict(fractions="0.6,0.4", stratify="clues"),
}


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("streaming") / "corpus.csv"
    CORPUS.write_csv(path)
    return path


@pytest.fixture
def fixed_metadata(monkeypatch):
    monkeypatch.setattr(Job, "metadata", lambda self, *args, **kwargs: {"fixed": True})


def _digests(folder) -> dict[str, str]:
    return {
        str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.rglob("*"))
        if f.is_file() and f.name != "manifest.json"
    }


@pytest.mark.parametrize("run", sorted(RUNS))
def test_the_files_are_the_bytes_the_in_memory_split_wrote(corpus_file, tmp_path, run,
                                                           fixed_metadata):  # fmt: skip
    out = tmp_path / "splits"

    split_file(corpus_file, out, seed=5, batch_size=37, workers=1, progress=False, **RUNS[run])

    assert _digests(out) == EXPECTED[run]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["splits"]  # no spill left beside


@pytest.mark.parametrize("memory", [None, 0, 20_000], ids=["held", "spilled", "both"])
@pytest.mark.parametrize("run", sorted(RUNS))
def test_many_small_buckets_give_the_same_bytes(corpus_file, tmp_path, run, memory,
                                                fixed_metadata, monkeypatch):  # fmt: skip
    monkeypatch.setattr(spill, "BUCKET_BYTES", 2_000)  # a few rows a bucket: dozens of them
    if memory is not None:  # spilled to files from the first part, or from a later one
        monkeypatch.setattr(spill, "MEMORY_BYTES", memory)
    routed = []
    real = spill._route
    monkeypatch.setattr(spill, "_route", lambda *a: routed.append(real(*a)) or routed[-1])
    out = tmp_path / "splits"

    split_file(corpus_file, out, seed=5, batch_size=37, workers=1, progress=False, **RUNS[run])

    assert _digests(out) == EXPECTED[run]
    assert len(routed[0]) > 20  # the rows did go through many buckets
    assert sorted(p.name for p in tmp_path.iterdir()) == ["splits"]


def test_several_inputs_are_one_corpus_named_by_source_with_repeats_dropped(tmp_path):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    CORPUS[:150].write_csv(first)
    CORPUS[150:].write_csv(second)
    out = tmp_path / "splits"

    manifest = split_file([first, second], out, seed=2, progress=False)
    in_memory = pipeline.split(CORPUS, seed=2)

    assert manifest.left_out["duplicate"] == 3
    for name in ("train", "val", "test"):
        frame = pl.read_parquet(out / f"{name}.parquet")
        assert frame["source"].unique().sort().to_list() == [str(first), str(second)]
        assert frame["puzzle"].to_list() == in_memory[name]["puzzle"].to_list(), name


def test_a_run_that_fails_while_writing_leaves_no_spill_and_no_folder(corpus_file, tmp_path,
                                                                      monkeypatch):  # fmt: skip
    from pipeline.jobs.split import job

    seen = []

    def full_disk(kept, *args):
        seen.append(sorted(p.name for p in kept.folder.iterdir()))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(job, "write_splits", full_disk)
    monkeypatch.setattr(spill, "MEMORY_BYTES", 0)  # every part spilled to its file

    with pytest.raises(OSError, match="No space"):
        split_file(corpus_file, tmp_path / "splits", batch_size=50, progress=False)

    assert seen and seen[0][0] == "part-000000.arrow"  # the rows were spilled
    assert list(tmp_path.iterdir()) == []


def test_buckets_are_a_power_of_two_near_their_size_and_never_past_the_cap():

    row = 500  # bytes a row

    assert spill.bucket_bits(0, row) == 0
    assert spill.bucket_bits(1_000, row) == 0  # 0.5 MB: one bucket
    assert 2 ** spill.bucket_bits(10**6, row) * spill.BUCKET_BYTES >= 500 * 10**6
    assert 2 ** (spill.bucket_bits(10**6, row) - 1) * spill.BUCKET_BYTES < 500 * 10**6
    assert spill.bucket_bits(10**12, row) == spill.MAX_BUCKET_BITS


def test_kept_rows_are_held_in_memory_until_their_budget_then_all_spilled(tmp_path):
    import pyarrow as pa

    from pipeline.jobs.split.options import SplitOptions

    options = SplitOptions.parse((0.5, 0.5), None, 0, None)
    table = pa.table({"puzzle": pa.array(["1" * 81] * 10), "group": pa.array(range(10))})
    kept = spill.KeptRows(tmp_path / "kept", options, None, memory=2 * table.nbytes)

    kept.add(table)
    kept.add(table)
    assert kept.in_memory and list((tmp_path / "kept").iterdir()) == []

    kept.add(table)  # past the budget: the parts held go to their files too
    assert not kept.in_memory
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == [
        f"part-{i:06d}.arrow" for i in range(3)
    ]
    assert [n for _, n in kept.parts] == [10, 10, 10]
