"""The enumerate command and its twins: every solution of each puzzle, one row each, streamed."""

import json

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from pipeline.errors import InputError
from pipeline.grid import parse_puzzles
from pipeline.jobs.enumerate import enumerate_file, enumerate_puzzles
from pipeline.kernels import enumeration
from tests.conftest import assert_one_line_error, cli
from tests.reference_count import all_solutions, candidates_from_text

# a puzzle with 17 givens removed from a generated one... any puzzle with a few solutions
UNIQUE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SEVERAL = "." * 9 + UNIQUE[9:]  # its first row opened up: a few solutions
CLASH = "11" + "." * 79


def reference(puzzle: str, limit: int) -> set[str]:
    return set(all_solutions(candidates_from_text(puzzle), limit))


def fake_search(solutions_of):
    """An `enumerate_batch` stand-in: `solutions_of(puzzle array, limit)` gives (k, 81)
    arrays, handed out as they are, up to the limit, for each puzzle not skipped."""

    def search(puzzles, limit, chunk=1024, skip=None, candidates=False, max_nodes=None,
               spent=None):  # fmt: skip
        for row, puzzle in enumerate(puzzles):
            if skip is not None and skip[row]:
                continue
            left = limit
            for block in solutions_of(puzzle, limit):
                if left <= 0:
                    break
                block = block[: min(left, chunk)]
                at = limit - left
                left -= len(block)
                yield enumeration.SolutionChunk(np.full(len(block), row, np.int64),
                                                np.arange(at, at + len(block)), block)  # fmt: skip

    return search


@pytest.fixture
def from_reference(monkeypatch):
    """The job run on the plain-Python reference's solutions (the io side alone)."""

    def solutions_of(puzzle, limit):
        if puzzle.dtype == np.uint16:
            masks = [int(m) for m in puzzle]
        else:
            masks = [0x1FF if v == 0 else 1 << (int(v) - 1) for v in puzzle]
        found = sorted(all_solutions(masks, limit))
        return [np.array([[int(c) for c in s] for s in found], np.uint8).reshape(-1, 81)]

    monkeypatch.setattr(enumeration, "enumerate_batch", fake_search(solutions_of))


def test_enumerate_writes_one_row_per_solution(tmp_path, from_reference):
    source = tmp_path / "family.csv"
    source.write_text(f"id,puzzle\na,{UNIQUE}\nb,x\nc,{SEVERAL}\nd,{CLASH}\n")
    out = tmp_path / "family.solutions.parquet"
    done = cli("enumerate", source, "--limit", 1000, "--json")
    assert done.exit_code == 0, done.stderr
    table = pl.read_parquet(out)
    assert table.columns == ["row", "id", "k", "solution"]
    several = reference(SEVERAL, 1000)
    assert table["row"].to_list() == [0] + [2] * len(several)
    assert table["id"].to_list() == ["a"] + ["c"] * len(several)
    assert table["k"].to_list() == [0, *range(len(several))]
    assert set(table.filter(pl.col("row") == 2)["solution"]) == several
    summary = json.loads(done.stdout)
    assert summary["solutions"] == 1 + len(several) and summary["rows"] == 4
    assert summary["puzzles"] == {"complete": 2, "at_limit": 0, "limit": 0, "unsolvable": 0,
                                  "invalid": 1, "malformed": 1}  # fmt: skip


def test_the_limit_cuts_each_puzzle(tmp_path, from_reference):
    source = tmp_path / "family.txt"
    source.write_text(f"{SEVERAL}\n{UNIQUE}\n{SEVERAL}\n")
    out = tmp_path / "out.csv"
    done = cli("enumerate", source, "-o", out, "--limit", 2, "-q")
    assert done.exit_code == 0, done.stderr
    table = pl.read_csv(out, schema_overrides={"solution": pl.String})
    assert table["row"].to_list() == [0, 0, 1, 2, 2]
    assert table["k"].to_list() == [0, 1, 0, 0, 1]
    assert done.stderr == ""


@pytest.mark.parametrize(("workers", "behind"), [(1, 2), (2, 8)])
def test_parts_are_written_as_the_solutions_come(tmp_path, monkeypatch, workers, behind):
    """A puzzle with many solutions is never held whole: while the search is still running,
    the parts of the rows it found are already on disk, none over `--batch-size` rows. With
    one worker the search runs in the calling thread, at most the two parts the encoder holds
    ahead; with two, a worker thread's search is held up once its hand-off holds a part's
    rows (a part and one table more handed over, a third being made), the calling thread
    joins one, and four (two a worker) are being encoded."""
    out = tmp_path / "many.parquet"
    partial = tmp_path / "many.parquet.partial"
    seen: list[int] = []

    wanted = parse_puzzles([SEVERAL]).grids[0]

    def solutions_of(puzzle, limit):
        if not (puzzle == wanted).all():  # the kernels' warm-up, on boards of its own
            return
        for j in range(200):
            seen.append(len(list(partial.glob("part-*"))))
            yield np.full((100, 81), 1 + j % 9, np.uint8)

    monkeypatch.setattr(enumeration, "enumerate_batch", fake_search(solutions_of))
    summary = enumerate_file([_write(tmp_path, [SEVERAL])], out, limit=10**9, batch_size=1000,
                             progress=False, workers=workers)  # fmt: skip
    assert summary.solutions == 20_000 and summary.puzzles["complete"] == 1
    # 100 rows a chunk, 1000 a part: before chunk j, (j * 100) // 1000 parts are made, of
    # which all but the `behind` in flight are kept
    made = [j * 100 // 1000 for j in range(200)]
    assert all(m - behind <= s <= m for s, m in zip(seen, made, strict=True)), seen
    assert seen[-1] >= 19 - behind  # written while the search goes on
    assert pq.ParquetFile(out).metadata.num_rows == 20_000
    assert not partial.exists()


def _write(tmp_path, puzzles):
    path = tmp_path / "in.txt"
    path.write_text("".join(p + "\n" for p in puzzles))
    return path


def test_pencilmark_puzzles_are_enumerated_from_their_candidates(tmp_path, from_reference):
    from pipeline.grid import parse_puzzles
    from pipeline.pencilmarks import candidates_of, format_pencilmarks

    marks = format_pencilmarks(candidates_of(parse_puzzles([SEVERAL]).grids))[0]
    first = reference(SEVERAL, 1000)
    narrowed = list(marks)
    keep = sorted(first)[0][0]  # cell 0: only its digit in the first solution
    narrowed[0:9] = [str(d) if str(d) == keep else "." for d in range(1, 10)]
    frames = list(enumerate_puzzles(["".join(narrowed)], limit=1000))
    solutions = set(pl.concat(frames)["solution"])
    assert solutions == {s for s in first if s[0] == keep}


def test_enumerate_puzzles_streams_frames_of_bounded_size(from_reference):
    frames = enumerate_puzzles([SEVERAL, "bad", UNIQUE], limit=100, chunk_rows=3)
    sizes = [f.height for f in frames]
    assert max(sizes) <= 3 and sum(sizes) == len(reference(SEVERAL, 100)) + 1


def test_a_bad_limit_is_said_at_once():
    with pytest.raises(ValueError, match="limit"):
        enumerate_puzzles([UNIQUE], limit=0)
    with pytest.raises(InputError, match="limit"):
        enumerate_file("nowhere.txt", limit=0)


def test_enumerate_refuses_to_overwrite_a_file_it_did_not_write(tmp_path, from_reference):
    source = _write(tmp_path, [UNIQUE])
    out = tmp_path / "mine.csv"
    out.write_text("precious\n")
    done = cli("enumerate", source, "-o", out, "--limit", 5)
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "--force")
    assert out.read_text() == "precious\n"
    assert cli("enumerate", source, "-o", out, "--limit", 5, "--force").exit_code == 0
    assert pl.read_csv(out, infer_schema=False)["row"].to_list() == ["0"]


def test_enumerate_to_stdout(tmp_path, from_reference):
    source = _write(tmp_path, [UNIQUE, SEVERAL])
    done = cli("enumerate", source, "-o", "-", "--limit", 1, "-q")
    assert done.exit_code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "row,k,solution" and [line[:4] for line in lines[1:]] == ["0,0,", "1,0,"]


def test_an_input_without_solutions_gives_an_empty_output(tmp_path, from_reference):
    source = _write(tmp_path, [CLASH, "nonsense"])
    out = tmp_path / "none.parquet"
    done = cli("enumerate", source, "-o", out, "--limit", 5)
    assert done.exit_code == 0, done.stderr
    assert pq.read_table(out).num_rows == 0
    assert "0 solutions of 2 rows" in done.stderr


def test_the_kernel_enumerates_what_the_reference_finds(tmp_path):
    source = _write(tmp_path, [SEVERAL, UNIQUE])
    out = tmp_path / "out.parquet"
    assert cli("enumerate", source, "-o", out, "--limit", 10_000, "-q").exit_code == 0
    table = pl.read_parquet(out)
    assert set(table.filter(pl.col("row") == 0)["solution"]) == reference(SEVERAL, 10_000)
    assert table.filter(pl.col("row") == 1)["solution"].to_list() == list(reference(UNIQUE, 2))


def test_an_interrupted_run_leaves_nothing_behind(tmp_path, monkeypatch):
    def solutions_of(puzzle, limit):
        yield np.ones((600, 81), np.uint8)
        yield np.ones((600, 81), np.uint8)  # a part is kept by now
        raise KeyboardInterrupt

    monkeypatch.setattr(enumeration, "enumerate_batch", fake_search(solutions_of))
    out = tmp_path / "out.parquet"
    done = cli("enumerate", _write(tmp_path, [SEVERAL]), "-o", out, "--limit", 10**6,
               "--batch-size", 1000)  # fmt: skip
    assert done.exit_code == 130
    assert_one_line_error(done.stderr, "interrupted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]  # no output, parts, lock


def test_a_rerun_replaces_its_own_output(tmp_path, from_reference):
    source = _write(tmp_path, [UNIQUE])
    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"out.{fmt}"
        for _ in range(2):
            done = cli("enumerate", source, "-o", out, "--limit", 3, "-q")
            assert done.exit_code == 0, (fmt, done.stderr)


def test_several_inputs_name_their_source(tmp_path, from_reference):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(UNIQUE + "\n")
    second.write_text(f"nonsense\n{UNIQUE}\n")
    out = tmp_path / "both.parquet"
    done = cli("enumerate", first, second, "-o", out, "--limit", 3, "-q")
    assert done.exit_code == 0, done.stderr
    table = pl.read_parquet(out)
    assert table.columns[:2] == ["source", "row"]
    assert [s.rsplit("/", 1)[-1] for s in table["source"].cast(str)] == ["a.txt", "b.txt"]
    assert table["row"].to_list() == [0, 1]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_node_budget_keeps_the_rows_found_before_it_ran_out(tmp_path, workers):
    many = "." * 18 + UNIQUE[18:]  # two rows opened up: 2,484 solutions, 4,479 nodes
    source = _write(tmp_path, [many, UNIQUE, many])
    full, cut = tmp_path / "full.csv", tmp_path / "cut.csv"
    everything = enumerate_file(source, full, limit=10_000, workers=workers, progress=False)
    assert everything.puzzles["complete"] == 3 and everything.puzzles["limit"] == 0
    summary = enumerate_file(source, cut, limit=10_000, max_nodes=100, workers=workers,
                             progress=False)  # fmt: skip
    assert summary.puzzles["limit"] == 2 and summary.puzzles["complete"] == 1
    assert summary.max_nodes == 100 and summary.metadata["options"]["max_nodes"] == 100
    whole = pl.read_csv(full, schema_overrides={"solution": pl.String})
    kept = pl.read_csv(cut, schema_overrides={"solution": pl.String})
    assert 1 <= kept.height < whole.height and summary.solutions == kept.height
    assert kept["row"].to_list().count(1) == 1  # the unique one, whole
    for row in (0, 2):  # the first solutions, in the search's order
        mine = kept.filter(pl.col("row") == row)
        assert mine.rows() == whole.filter(pl.col("row") == row).head(mine.height).rows()


def test_max_nodes_on_the_command_line(tmp_path):
    source = _write(tmp_path, ["." * 18 + UNIQUE[18:]])
    done = cli("enumerate", source, "-o", tmp_path / "o.csv", "--limit", 100, "--max-nodes", 2,
               "--json")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["puzzles"]["limit"] == 1
    bad = cli("enumerate", source, "-o", tmp_path / "p.csv", "--limit", 100, "--max-nodes", 0)
    assert bad.exit_code == 2 and not (tmp_path / "p.csv").exists()


def test_enumerate_to_a_dataset_folder(tmp_path):
    """`-o DIR/`: the parts, a file each in order, read as the one file's table (the real
    search: the reference's stand-in hands out one chunk of a batch's size)."""
    source = _write(tmp_path, [SEVERAL, UNIQUE, SEVERAL])
    one, folder = tmp_path / "one.parquet", tmp_path / "ds"
    for out in (one, f"{folder}/"):
        done = cli("enumerate", source, "-o", out, "--limit", 2, "--batch-size", 1, "-q")
        assert done.exit_code == 0, done.stderr
    manifest = json.loads((folder / "_manifest.json").read_text())
    names = [f["file"] for f in manifest["files"]]
    assert sorted(p.name for p in folder.glob("*.parquet")) == names and len(names) >= 3
    assert pl.scan_parquet(f"{folder}/*.parquet").collect().equals(pl.read_parquet(one))
    assert manifest["rows"] == sum(f["rows"] for f in manifest["files"]) == 5  # solutions
