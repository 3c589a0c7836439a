"""Counting solutions (`--solutions N`, `solution_count`) and solving pencilmark puzzles,
checked against a plain-Python counter (tests/reference_count.py) and, when it is built,
against tdoku's library itself."""

import ctypes
import random

import pyarrow.parquet as pq
import pytest

from benchmarks.common import tdoku_library
from pipeline.jobs.generate.puzzles import generate
from pipeline.jobs.solve.frame import solve_batch
from tests.conftest import TDOKU_SKIP, cli
from tests.reference_count import candidates_from_text, count_solutions


def verdict_of(count: int) -> set[str]:
    """The verdicts a puzzle with `count` solutions (counted to at least 2) may get."""
    return {0: {"unsolvable", "invalid"}, 1: {"solved"}}.get(count, {"multiple"})


@pytest.fixture(scope="module")
def loosened() -> list[str]:
    """Generated puzzles with 0 to 6 givens removed: counts from 1 to hundreds."""
    rng = random.Random(27)
    out = []
    for puzzle in generate(24, seed=27)["puzzle"].to_list():
        givens = [i for i, ch in enumerate(puzzle) if ch != "."]
        cells = list(puzzle)
        for i in rng.sample(givens, rng.randrange(0, 7)):
            cells[i] = "."
        out.append("".join(cells))
    return out


def pencilmark_puzzles(seed: int, n: int) -> list[str]:
    """Pencilmark puzzles from generated ones: each blank keeps its solution's digit and a
    random share of the others; now and then a blank loses its solution's digit (no
    solution, usually), or several givens are opened up (several solutions)."""
    rng = random.Random(seed)
    frame = generate(n, seed=seed)
    out = []
    for puzzle, solution in zip(frame["puzzle"], frame["solution"], strict=True):
        cells = []
        opened = set(rng.sample(range(81), 20)) if rng.random() < 0.3 else set()
        spoiled = rng.randrange(81) if rng.random() < 0.2 else -1
        for i, (given, digit) in enumerate(zip(puzzle, solution, strict=True)):
            keep = {int(digit)}
            if given == "." or i in opened:
                keep |= {d for d in range(1, 10) if rng.random() < (0.9 if opened else 0.5)}
            if i == spoiled and given == ".":
                keep.discard(int(digit))
            cells.append("".join(str(d) if d in keep else "." for d in range(1, 10)))
        out.append("".join(cells))
    return out


@pytest.mark.parametrize("limit", [3, 10, 200])
def test_solution_count_is_the_count_up_to_the_limit(loosened, limit):
    results = solve_batch(loosened, solutions=limit)
    expected = [count_solutions(candidates_from_text(p), limit) for p in loosened]
    assert results["solution_count"].to_list() == expected
    assert max(expected) == limit  # the limit is reached somewhere: N means "N or more"
    for verdict, count in zip(results["verdict"].to_list(), expected, strict=True):
        assert verdict in verdict_of(count)


def test_no_solution_count_up_to_two():
    results = solve_batch(["." * 81], solutions=2)
    assert "solution_count" not in results.columns


def test_solution_count_of_bad_rows(loosened):
    clash = "11" + "." * 79
    results = solve_batch(["x", clash, loosened[0]], solutions=5)
    assert results["verdict"].to_list()[:2] == ["malformed", "invalid"]
    assert results["solution_count"].to_list()[:2] == [None, 0]


def test_solve_counts_from_the_command_line(tmp_path, loosened):
    source = tmp_path / "loose.txt"
    source.write_text("\n".join(loosened) + "\n")
    out = tmp_path / "loose.parquet"
    done = cli("solve", source, "-o", out, "--solutions", "50", "-q")
    assert done.exit_code == 0, done.stderr
    table = pq.read_table(out)
    expected = [count_solutions(candidates_from_text(p), 50) for p in loosened]
    assert table.column("solution_count").to_pylist() == expected


def test_pencilmark_verdicts_agree_with_the_reference():
    marks = pencilmark_puzzles(seed=5, n=60)
    results = solve_batch(marks)
    counts = [count_solutions(candidates_from_text(m), 2) for m in marks]
    assert {0, 1, 2} <= set(counts)  # every kind is there
    for verdict, count in zip(results["verdict"].to_list(), counts, strict=True):
        assert verdict in verdict_of(count)
    assert results["puzzle"].to_list() == marks  # the input form kept
    singles = [sum(1 for c in range(81) if m[9 * c : 9 * c + 9].count(".") == 8) for m in marks]
    assert results["clues"].to_list() == singles
    solved = results.filter(results["verdict"] == "solved")
    for mark, solution in zip(solved["puzzle"], solved["solution"], strict=True):
        assert all(mark[9 * c + int(solution[c]) - 1] != "." for c in range(81))


def test_pencilmark_counts_agree_with_the_reference():
    marks = pencilmark_puzzles(seed=6, n=40)
    results = solve_batch(marks, solutions=20)
    expected = [count_solutions(candidates_from_text(m), 20) for m in marks]
    assert results["solution_count"].to_list() == expected


@pytest.fixture(scope="module")
def tdoku() -> ctypes.CDLL:
    library = tdoku_library()
    if library is None:
        pytest.skip(TDOKU_SKIP)
    return library


def tdoku_count(lib: ctypes.CDLL, puzzle: str, limit: int) -> int:
    solution = ctypes.create_string_buffer(82)
    guesses = ctypes.c_size_t(0)
    return lib.TdokuSolverDpllTriadSimd(puzzle.encode(), limit, 0, solution,
                                        ctypes.byref(guesses))  # fmt: skip


def test_the_reference_agrees_with_tdoku_on_pencilmarks(tdoku):
    """The yardstick itself checked against tdoku, which reads 729 characters as pencilmarks."""
    marks = pencilmark_puzzles(seed=7, n=40)
    counts = [count_solutions(candidates_from_text(m), 30) for m in marks]
    assert [tdoku_count(tdoku, m, 30) for m in marks] == counts
    assert min(counts) == 0 and max(counts) > 2  # none, one and several solutions


def test_pencilmark_counts_agree_with_tdoku(tdoku):
    marks = pencilmark_puzzles(seed=8, n=40)
    results = solve_batch(marks, solutions=30)
    assert results["solution_count"].to_list() == [tdoku_count(tdoku, m, 30) for m in marks]


def test_validate_checks_pencilmark_puzzles_from_their_candidates():
    from pipeline.jobs.validate.frame import validate_puzzles

    marks = pencilmark_puzzles(seed=9, n=30)
    counts = [count_solutions(candidates_from_text(m), 2) for m in marks]
    findings = validate_puzzles(marks + [marks[0]])
    by_row: dict[int, set[str]] = {}
    for row, code in zip(findings["row"], findings["code"].cast(str), strict=True):
        by_row.setdefault(row, set()).add(code)
    for row, count in enumerate(counts):
        codes = by_row.get(row, set())
        assert "few_clues" not in codes and "not_minimal" not in codes  # givens only
        if count == 0:
            assert codes & {"unsolvable", "clash"}, (row, codes)
        elif count == 1:
            assert not codes & {"unsolvable", "clash", "multiple"}, (row, codes)
        else:
            assert "multiple" in codes, (row, codes)
    assert "duplicate" in by_row[len(marks)]
    several = findings.filter(findings["code"] == "multiple")
    for row, a, b in zip(several["row"], several["solution_a"], several["solution_b"],
                         strict=True):  # fmt: skip
        assert a != b
        assert all(marks[row][9 * c + int(s[c]) - 1] != "." for s in (a, b) for c in range(81))


def test_pencilmark_puzzles_are_graded_from_their_candidates(tmp_path):
    marks = pencilmark_puzzles(seed=10, n=12)
    source = tmp_path / "marks.txt"
    source.write_text("\n".join(marks) + "\n")
    out = tmp_path / "marks.parquet"
    assert cli("solve", source, "-o", out, "--rate", "-q").exit_code == 0
    table = pq.read_table(out).to_pylist()
    for row in table:
        rated = row["verdict"] in ("solved", "multiple")
        assert (row["grade"] is not None) == rated
        assert (row["difficulty"] is not None) == rated


def test_a_lazy_frame_knows_the_solution_count_column(loosened):
    import polars as pl

    lazy = solve_batch(pl.LazyFrame({"puzzle": loosened}), solutions=4)
    assert lazy.collect_schema()["solution_count"] == pl.Int64
    assert lazy.collect()["solution_count"].max() == 4


def test_report_reads_results_with_a_solution_count(tmp_path, loosened):
    source = tmp_path / "loose.txt"
    source.write_text("\n".join(loosened) + "\n")
    out = tmp_path / "loose.parquet"
    assert cli("solve", source, "-o", out, "--solutions", "5", "-q").exit_code == 0
    done = cli("report", out)
    assert done.exit_code == 0, done.stderr


def test_a_csv_mixing_both_forms_is_solved_row_by_row(tmp_path, loosened):
    marks = pencilmark_puzzles(seed=11, n=4)
    rows = [loosened[0], marks[0].replace(".", "0"), "oops", marks[1], loosened[1]]
    source = tmp_path / "mixed.csv"
    source.write_text("id,puzzle\n" + "".join(f"{i},{p}\n" for i, p in enumerate(rows)))
    out = tmp_path / "mixed.parquet"
    done = cli("solve", source, "-o", out, "--solutions", "5", "-q")
    assert done.exit_code == 0, done.stderr
    table = pq.read_table(out).to_pylist()
    assert [r["puzzle"] for r in table] == [rows[0].replace("0", "."), rows[1], "oops",
                                            rows[3], rows[4].replace("0", ".")]  # fmt: skip
    expected = [count_solutions(candidates_from_text(p), 5) for p in rows if p != "oops"]
    assert [r["solution_count"] for r in table if r["verdict"] != "malformed"] == expected
    assert table[2]["verdict"] == "malformed" and table[2]["solution_count"] is None
