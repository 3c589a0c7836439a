"""`sudoku-pipeline validate` and its twins `validate_file` / `validate_puzzles`, by example.

Row checks run in this process with `validate_puzzles` (fast); the file job, the exit codes and
the shared public sets run the real command, whose cost is mostly starting the workers (~1 s).
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipeline import generate
from pipeline.cli import app
from pipeline.errors import InputError
from pipeline.grid import format_grids, parse_puzzles
from pipeline.jobs.validate import validate_file, validate_puzzles
from pipeline.jobs.validate.catalogue import CODES, findings_schema
from pipeline.jobs.validate.duplicates import DuplicateIndex, row_keys
from pipeline.kernels.checks import verify_solutions
from pipeline.symmetry import random_symmetries
from tests.conftest import COMPILED_BY, SHARED_DATA, command

DATA = Path(__file__).resolve().parents[1] / "data"
SEED = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"


def findings(df: pl.DataFrame) -> list[tuple[int, str]]:
    return list(zip(df["row"].to_list(), df["code"].cast(pl.String).to_list(), strict=True))


def cli(*args: object):
    return CliRunner().invoke(app, ["validate", *(str(a) for a in args)])


# --- row checks, one crafted example each (in process) --------------------------------------


def test_a_good_puzzle_has_no_findings():
    assert validate_puzzles([SEED], [SOLUTION]).is_empty()


def test_malformed_rows_say_what_is_wrong_and_where():
    df = validate_puzzles([SEED[:80], SEED + "5", SEED[:40] + "x" + SEED[41:], None])
    assert findings(df) == [(0, "malformed"), (1, "malformed"), (2, "malformed"), (3, "malformed")]
    assert df["message"].to_list() == [
        "expected 81 cells, got 80",
        "expected 81 cells, got 82",
        "stray character 'x' at cell 40",
        "missing puzzle",
    ]
    assert (df["level"].cast(pl.String) == "error").all()


def test_clash_names_the_unit_the_digit_and_the_cells():
    row = "55" + "." * 79
    column = "5" + "." * 8 + "5" + "." * 71
    box = "5" + "." * 9 + "5" + "." * 70
    df = validate_puzzles([row, column, box]).filter(pl.col("code") == "clash")
    assert df["message"].to_list() == [
        "row 1 repeats 5 at columns 1 and 2",
        "column 1 repeats 5 at rows 1 and 2",
        "box 1 repeats 5 at cells r1c1 and r2c2",
    ]
    assert df["cells"].to_list() == [[0, 1], [0, 9], [0, 10]]


def test_unsolvable_puzzle():
    unsolvable = "12345678." + "........9" + "." * 63  # r1c9 can hold nothing
    df = validate_puzzles([unsolvable])
    assert findings(df) == [(0, "unsolvable"), (0, "few_clues")]
    assert df["message"][0].startswith("no solution")


def test_multiple_solutions_come_with_two_different_solutions_as_evidence():
    puzzle = "." * 81
    df = validate_puzzles([puzzle])
    assert findings(df) == [(0, "multiple"), (0, "few_clues")]
    a, b = df["solution_a"][0], df["solution_b"][0]
    assert a != b
    grids = parse_puzzles([a, b]).grids
    assert verify_solutions(np.zeros((2, 81), np.uint8), grids).all()
    assert df["message"][1] == "0 givens: no puzzle with fewer than 17 has a unique solution"
    assert df["level"].cast(pl.String).to_list() == ["error", "info"]


def test_a_17_clue_puzzle_with_a_given_removed_is_multiple_and_few_clues():
    puzzle = "...8.1..........435............7.8........1...2..3....6......75..34........2..6.."
    assert validate_puzzles([puzzle]).is_empty()  # a known 17-clue puzzle, unique
    sixteen = puzzle[:3] + "." + puzzle[4:]
    df = validate_puzzles([sixteen])
    assert findings(df) == [(0, "multiple"), (0, "few_clues")]
    assert df["message"][1].startswith("16 givens")


def test_wrong_solution_column_every_way():
    changed = "6" + SOLUTION[1:]  # r1c1 is given as 5
    swapped = SOLUTION[:-2] + SOLUTION[-1] + SOLUTION[-2]  # a given pair swapped: repeats
    blank = SOLUTION[:80] + "."
    df = validate_puzzles([SEED] * 5, [SOLUTION, changed, swapped, blank, "12"])
    df = df.filter(pl.col("code") != "duplicate")  # the same puzzle five times
    assert findings(df) == [(r, "wrong_solution") for r in (1, 2, 3, 4)]
    messages = df["message"].to_list()
    assert messages[0].startswith("the solution column is not a valid grid (")
    assert "changes the given 5 at r1c1 to 6" in messages[0]
    assert messages[0].endswith("differs from the unique solution at 1 cell")
    assert "changes the given 7 at r9c8 to 9 (and 1 more given), and" in messages[1]
    assert messages[2].startswith("the solution column is not a full grid (1 blank cell)")
    assert messages[3].startswith("the solution column is not a grid (expected 81 cells, got 2)")
    assert set(df["unique_solution"]) == {SOLUTION}
    assert df["column_solution"].to_list() == [changed, swapped, blank, "12"]
    assert df["cells"].to_list()[0] == [0]


def test_a_solution_of_a_puzzle_with_several_is_not_wrong():
    puzzle = "." * 81
    df = validate_puzzles([puzzle, puzzle], [SOLUTION, "1" * 81])
    assert findings(df) == [
        (0, "multiple"), (0, "few_clues"), (1, "multiple"), (1, "few_clues"),
        (1, "wrong_solution"), (1, "duplicate"),
    ]  # fmt: skip


def test_node_budget_gives_a_limit_warning():
    hard = "98.7..6..75..4......3..8.7.5....7.3...94.........2.1..3.......1.9...5.8...52....6"
    df = validate_puzzles([hard], max_nodes=1)
    assert findings(df) == [(0, "limit")]
    assert df["level"][0] == "warning"
    assert "node budget of 1" in df["message"][0]


def test_duplicates_in_memory_compare_parsed_puzzles():
    zeros = "  " + SEED.replace(".", "0") + " "
    df = validate_puzzles(pl.Series([SEED, "bad", zeros, "bad", SEED]))
    assert findings(df) == [(1, "malformed"), (2, "duplicate"), (3, "malformed"), (4, "duplicate")]
    assert df.filter(pl.col("code") == "duplicate")["first_row"].to_list() == [0, 0]
    assert df["message"][1] == "same puzzle as row 0"


def test_planted_copies_in_disguise_are_symmetry_duplicates_of_the_first(tmp_path):
    """A copy with its digits relabelled, rows swapped and the grid transposed is the same
    puzzle: `symmetry_duplicate` names the first row with that canonical form (and its id);
    an exact copy stays a plain `duplicate`, and is not said twice."""
    made = generate(5, seed=9)
    grids = parse_puzzles(made["puzzle"]).grids
    disguised = random_symmetries(grids[[1, 3]], np.random.default_rng(4))
    puzzles = [
        *made["puzzle"].to_list(),
        *pl.Series(format_grids(disguised)).to_list(),
        made["puzzle"][3],
    ]  # rows 5, 6: disguised 1 and 3; row 7: an exact copy of 3
    path = tmp_path / "planted.csv"
    pl.DataFrame({"id": [f"p{i}" for i in range(8)], "puzzle": puzzles}).write_csv(path)
    out = tmp_path / "planted.findings.parquet"

    summary = validate_file(path, out, batch_size=3, workers=2, progress=False, symmetry=True)

    df = pl.read_parquet(out)
    assert findings(df) == [(5, "symmetry_duplicate"), (6, "symmetry_duplicate"),
                            (7, "duplicate")]  # fmt: skip
    assert df["first_row"].to_list() == [1, 3, 3]
    assert df["message"][0] == "same puzzle up to symmetry as row 1 (id p1)"
    assert df["id"].to_list() == ["p5", "p6", "p7"]
    assert summary.findings["symmetry_duplicate"] == 2 and summary.clean
    assert validate_file(path, out, progress=False).findings["symmetry_duplicate"] == 0
    in_memory = validate_puzzles(pl.Series(puzzles), symmetry=True)
    assert findings(in_memory) == findings(df)


# --- --minimal -------------------------------------------------------------------------------


def test_minimal_on_a_generated_minimal_puzzle_is_clean_and_an_extra_given_is_named():
    made = generate(1, seed=7)
    puzzle, solution = made["puzzle"][0], made["solution"][0]
    assert validate_puzzles([puzzle], minimal=True).is_empty()
    cell = puzzle.index(".")
    extra = puzzle[:cell] + solution[cell] + puzzle[cell + 1 :]
    df = validate_puzzles([extra], minimal=True)
    assert findings(df) == [(0, "not_minimal")]
    assert df["level"][0] == "warning"
    assert cell in df["cells"][0].to_list()
    name = f"{solution[cell]} at r{cell // 9 + 1}c{cell % 9 + 1}"
    assert name in df["message"][0]
    assert validate_puzzles([extra]).is_empty()  # minimality is only checked on request


# --- duplicate keys --------------------------------------------------------------------------


def test_row_keys_tell_puzzles_apart_and_mark_rows_that_are_not_puzzles():
    rng = np.random.default_rng(0)
    grids = rng.integers(0, 10, size=(50_000, 81), dtype=np.uint8)
    grids[1] = grids[0]
    grids[2] = grids[0]
    grids[2, 80] = (grids[0, 80] + 1) % 10  # one cell apart, the last one
    ok = np.ones(len(grids), bool)
    ok[3] = False
    keys = row_keys(grids, ok)
    assert (keys[0] == keys[1]).all() and not (keys[0] == keys[2]).all()
    assert (keys[3] == 0).all() and (keys[ok] & 1 == 1).all()
    assert len(np.unique(keys[ok][1:], axis=0)) == ok.sum() - 1


def _repeats_in_batches(keys: np.ndarray, sizes: list[int]) -> tuple[list[int], list[int]]:
    """The repeats `DuplicateIndex` finds when `keys` come in batches of `sizes` rows."""
    index = DuplicateIndex()
    rows: list[int] = []
    first: list[int] = []
    at = 0
    for size in sizes:
        found_rows, found_first = index.add(at, keys[at : at + size])
        rows += found_rows.tolist()
        first += found_first.tolist()
        at += size
    return rows, first


def test_duplicate_index_finds_repeats_across_batches_as_they_come():
    keys = np.array([[5, 7], [9, 9], [0, 0], [5, 7], [0, 0], [5, 9], [9, 9], [5, 7], [1, 1]],
                    dtype=np.uint64)  # fmt: skip
    index = DuplicateIndex()
    assert [a.tolist() for a in index.add(0, keys[:2])] == [[], []]
    assert [a.tolist() for a in index.add(2, keys[2:7])] == [[3, 6], [0, 1]]  # as they come
    assert [a.tolist() for a in index.add(7, keys[7:])] == [[7], [0]]
    assert index.nbytes == 4 * 20  # each distinct puzzle once: 5/7, 9/9, 5/9, 1/1
    with pytest.raises(ValueError):
        index.add(3, keys[:1])


def test_duplicate_index_keeps_rows_past_what_four_bytes_hold():
    keys = np.array([[5, 7], [9, 9], [5, 7], [3, 3], [3, 3], [9, 9]], dtype=np.uint64)
    index = DuplicateIndex()
    index.rows = start = 2**31 - 2  # as if that many rows had come: the first rows' bytes grow
    rows, first = index.add(start, keys[:3])
    assert rows.tolist() == [start + 2] and first.tolist() == [start]
    rows, first = index.add(start + 3, keys[3:])  # 3/3 first seen past 2**31: runs merged
    assert rows.tolist() == [start + 4, start + 5] and first.tolist() == [start + 3, start + 1]


def test_rows_that_share_only_a_first_half_repeat_each_other_not_the_first():
    # First halves alike, second halves apart: rows 1 and 2 are one puzzle, 0 and 3 another.
    keys = np.array([[5, 7], [5, 9], [5, 9], [5, 7], [5, 11]], dtype=np.uint64)
    assert _repeats_in_batches(keys, [5]) == ([2, 3], [1, 0])
    assert _repeats_in_batches(keys, [1, 1, 1, 1, 1]) == ([2, 3], [1, 0])


def _first_seen(keys: np.ndarray) -> tuple[list[int], list[int]]:
    """The duplicates by a dict, row by row: the slow, plain reference."""
    seen: dict[tuple[int, int], int] = {}
    rows, first = [], []
    for row, key in enumerate(map(tuple, keys.tolist())):
        if key == (0, 0):
            continue
        if key in seen:
            rows.append(row)
            first.append(seen[key])
        else:
            seen[key] = row
    return rows, first


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=60),
       st.lists(st.integers(1, 9), min_size=1))  # fmt: skip
def test_duplicates_agree_with_a_dict_of_first_rows(pairs, cuts):
    # Few values, so first halves collide often with and without their second halves; the
    # rows come in batches of any sizes, so the index's runs are merged in every way.
    keys = np.array(pairs, dtype=np.uint64).reshape(-1, 2)
    keys[(keys == 0).any(axis=1)] = 0  # a half is never 0 for a puzzle: such rows are not
    sizes, left = [], len(keys)
    while left > 0:
        sizes.append(min(cuts[len(sizes) % len(cuts)], left))
        left -= sizes[-1]
    assert _repeats_in_batches(keys, sizes) == _first_seen(keys)


# --- the file job ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bad_rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("bad") / "bad.findings.parquet"
    summary = validate_file(DATA / "bad_rows.csv", out, workers=1, progress=False)
    return summary, pl.read_parquet(out), out


def test_the_shipped_bad_rows_each_get_their_finding(bad_rows):
    summary, df, _ = bad_rows
    assert findings(df) == [
        (1, "malformed"), (2, "malformed"), (3, "malformed"), (4, "clash"), (4, "few_clues"),
        (5, "unsolvable"), (5, "few_clues"), (6, "multiple"), (6, "few_clues"),
        (7, "wrong_solution"), (8, "malformed"), (10, "duplicate"),
    ]  # fmt: skip
    assert df["id"].to_list()[:3] == ["b01", "b02", "b03"]
    duplicate = df.filter(pl.col("code") == "duplicate").row(0, named=True)
    assert duplicate["first_row"] == 0 and duplicate["message"] == "same puzzle as row 0 (id b00)"
    wrong = df.filter(pl.col("code") == "wrong_solution").row(0, named=True)
    assert wrong["unique_solution"] != wrong["column_solution"]
    assert summary.rows == 12 and not summary.clean
    assert summary.findings["malformed"] == 4 and summary.findings["duplicate"] == 1
    assert summary.levels == {"error": 8, "warning": 1, "info": 3}
    assert summary.rows_with_errors == 8
    assert summary.clues == {0: 1, 2: 1, 9: 1, 23: 2, 24: 1, 25: 2}  # the samples of `make data`
    assert summary.examples["malformed"][0] == {"row": 1, "id": "b01",
                                                "message": "expected 81 cells, got 80"}  # fmt: skip
    assert len(summary.examples["malformed"]) == 3


def test_the_findings_file_schema_and_metadata(bad_rows):
    summary, _, out = bad_rows
    file = pq.ParquetFile(out)
    assert file.schema_arrow.remove_metadata() == findings_schema(file.schema_arrow.field(
        "id").type)  # fmt: skip
    assert file.metadata.row_group(0).column(0).compression == "ZSTD"
    meta = json.loads(file.schema_arrow.metadata[b"sudoku_pipeline"])
    assert meta["command"] == "validate" and meta["input"]["rows"] == 12
    assert meta["findings"] == summary.findings and "versions" in meta
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temporary files left


def test_duplicates_across_batch_boundaries(tmp_path):
    made = generate(6, seed=3)["puzzle"].to_list()
    rows = [made[i] for i in (0, 1, 2, 3, 0, 4, 5, 1, 2, 0)]
    rows[9] = rows[9].replace(".", "0")  # the same puzzle, written differently
    path = tmp_path / "dups.txt"
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "dups.parquet"
    summary = validate_file(path, out, batch_size=3, workers=2, progress=False)
    df = pl.read_parquet(out)
    assert findings(df) == [(4, "duplicate"), (7, "duplicate"), (8, "duplicate"),
                            (9, "duplicate")]  # fmt: skip
    assert df["first_row"].to_list() == [0, 1, 2, 0]
    assert summary.clean and summary.levels["warning"] == 4


def test_exit_codes_follow_the_findings_as_linters_do(tmp_path):
    """1 when the data has an error-level finding (as ruff exits 1 on a lint error),
    `--exit-zero` opts out, `--strict` counts warnings too; 2 for a bad file."""
    bad = tmp_path / "bad_rows.csv"
    bad.write_bytes((DATA / "bad_rows.csv").read_bytes())
    result = cli(bad, "--workers", 1, "--quiet")
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().splitlines() == [
        "error: 8 error findings (--exit-zero to exit 0 anyway)"
    ]
    assert (tmp_path / "bad_rows.findings.parquet").exists()  # default: beside the input
    result = cli(bad, "--workers", 1, "--quiet", "--exit-zero", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["clean"] is False and summary["findings"]["clash"] == 1
    clean = tmp_path / "clean.csv"
    corpus = generate(20, seed=1)
    corpus.write_csv(clean)
    result = cli(clean, "--workers", 1, "--strict")
    assert result.exit_code == 0, result.output
    assert "clean; findings: none" in result.stderr
    repeated = tmp_path / "repeated.csv"
    pl.concat([corpus, corpus.head(1)]).write_csv(repeated)  # a duplicate: a warning
    assert cli(repeated, "--workers", 1, "-q").exit_code == 0
    result = cli(repeated, "--workers", 1, "-q", "--strict")
    assert result.exit_code == 1
    assert (
        result.stderr.strip() == "error: 1 error or warning findings (--exit-zero to exit 0 anyway)"
    )
    result = cli(tmp_path / "missing.csv", "--strict")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'missing.csv'}: no such file"
    ]


def test_bad_options_and_empty_input(tmp_path):
    with pytest.raises(InputError, match="max_nodes"):
        validate_file(DATA / "bad_rows.csv", tmp_path / "x.parquet", max_nodes=0)
    with pytest.raises(InputError, match="no such directory"):
        validate_file(DATA / "bad_rows.csv", tmp_path / "nope" / "x.parquet")
    empty = tmp_path / "empty.csv"
    empty.write_text("id,puzzle\n")
    summary = validate_file(empty, workers=1, progress=False)
    assert summary.rows == 0 and summary.clean
    assert pl.read_parquet(tmp_path / "empty.findings.parquet").is_empty()


# --- the shared public sets (skipped when ../shared/data is absent) ---------------------------


def shared(name: str) -> Path:
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} not present (public sets are optional for the tests)")
    return path


def test_the_kaggle_slice_validates_clean_solutions_included(tmp_path):
    summary = validate_file(shared("kaggle1m_first9999.csv"), tmp_path / "k.parquet",
                            progress=False)  # fmt: skip
    assert summary.rows == 9999 and summary.clean
    assert sum(summary.findings.values()) == 0
    meta = json.loads(pq.read_schema(tmp_path / "k.parquet").metadata[b"sudoku_pipeline"])
    assert meta["options"]["solution_column"] is None  # found by content: column_1


def test_a_sample_of_the_17_clue_set_validates_clean_and_minimal(tmp_path):
    lines = shared("puzzles2_17_clue.txt").read_text().splitlines()[:2000]
    sample = tmp_path / "17.txt"
    sample.write_text("\n".join(lines) + "\n")
    summary = validate_file(sample, progress=False, minimal=True)
    assert summary.rows > 1990 and summary.clean and sum(summary.findings.values()) == 0
    assert summary.clues == {17: summary.rows}


def test_the_serg_benchmark_puzzles_all_have_several_solutions(tmp_path):
    lines = shared("puzzles7_serg_benchmark.txt").read_text().splitlines()[:1000]
    sample = tmp_path / "serg.txt"
    sample.write_text("\n".join(lines) + "\n")
    summary = validate_file(sample, progress=False)
    df = pl.read_parquet(tmp_path / "serg.findings.parquet")
    assert summary.findings["multiple"] == summary.rows > 990
    assert set(df["code"].cast(pl.String)) == {"multiple"}
    assert df["row"].to_list() == list(range(summary.rows))


def test_every_code_has_a_level():
    assert set(CODES.values()) == {"error", "warning", "info"}


def test_duplicates_from_stdin_name_their_rows_and_ids_though_stdin_is_read_once():
    """stdin can be read once: the duplicates are found as the rows come, and the ids of the
    rows repeated are read back from what the run kept of them, not from the input."""
    made = generate(3, seed=2).select("id", "puzzle")
    text = pl.concat([made, made.head(1)]).write_csv()
    done = command("validate", "-", "-o", "-", "--format", "jsonl", "-q", "--exit-zero",
                   input=text)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(f["row"], f["code"], f["first_row"], f["id"]) for f in found] == [
        (3, "duplicate", 0, 0)
    ]
    assert found[0]["message"] == "same puzzle as row 0 (id 0)"


def test_the_command_looks_for_symmetric_duplicates_only_when_asked(tmp_path):
    made = generate(3, seed=6)
    grids = parse_puzzles(made["puzzle"]).grids
    disguised = pl.Series(format_grids(random_symmetries(grids[:1], np.random.default_rng(2))))
    path = tmp_path / "p.txt"
    path.write_text("\n".join([*made["puzzle"], *disguised]) + "\n")
    plain, asked = tmp_path / "plain.parquet", tmp_path / "asked.parquet"
    assert cli(path, "-o", plain, "-q").exit_code == 0
    assert cli(path, "-o", asked, "-q", "--symmetry").exit_code == 0
    assert pl.read_parquet(plain).is_empty()
    assert findings(pl.read_parquet(asked)) == [(3, "symmetry_duplicate")]


WARM_THEN_BATCH = (
    COMPILED_BY
    + """
from pipeline.run.warmup import warm
from pipeline.jobs.validate.batch import ValidateOptions, validate_record_batch

checks = ValidateOptions(max_nodes=None, minimal=sys.argv[1] == "1", symmetry=sys.argv[2] == "1")
warm(checks.kernels())
# with a solution column, a wrong one among them: its check compiled a kernel of its own, said
# as a raw `CompilingWarning` line (issue 34)
solutions = pa.array([sys.argv[-1].replace(".", "1")] * 4)
compiled_by(lambda batch: validate_record_batch(batch.append_column("solution", solutions), checks))
"""
)


@pytest.mark.parametrize(("minimal", "symmetry"), [(False, False), (True, True)])
def test_the_warm_up_loads_every_kernel_a_batch_calls(minimal, symmetry):
    # Workers run a batch only after the warm-up; a kernel it missed would compile in every
    # worker process at once on a first run, with no word of it.
    argv = [sys.executable, "-c", WARM_THEN_BATCH, str(int(minimal)), str(int(symmetry)), SEED]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
