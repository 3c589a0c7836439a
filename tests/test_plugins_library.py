"""`c:LIBRARY:SYMBOL` solvers: a tiny C solver with tdoku's signature, built here with `cc`, put
through the pipeline; a lying one to prove its answers are checked, never trusted; and tdoku's
own library, when it is built, agreeing with our verdicts on public puzzles."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import SHARED_DATA, TDOKU_SKIP, assert_one_line_error, cli, shared_puzzles

from benchmarks.common import tdoku_path
from pipeline.grid import format_grids
from pipeline.kernels import codes, solve_grids
from pipeline.plugins import parse_spec
from pipeline.plugins.batch import ask_solver

SOLVER_C = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#define SOLVER(name) size_t name(const char *p, size_t limit, uint32_t config, char *solution, \
                             size_t *guesses)

static int ok(const char *g, int cell, char d) {
    int r = cell / 9, c = cell % 9, br = r / 3 * 3, bc = c / 3 * 3;
    for (int k = 0; k < 9; k++) {
        if (g[r * 9 + k] == d || g[k * 9 + c] == d) return 0;
        if (g[(br + k / 3) * 9 + bc + k % 3] == d) return 0;
    }
    return 1;
}

/* plain backtracking, cells in order; counts up to limit, keeps the first solution */
static size_t search(char *g, int cell, size_t limit, size_t found, char *first, size_t *guesses) {
    while (cell < 81 && g[cell] != '.') cell++;
    if (cell == 81) { if (found == 0) memcpy(first, g, 81); return found + 1; }
    for (char d = '1'; d <= '9' && found < limit; d++) {
        if (!ok(g, cell, d)) continue;
        g[cell] = d; (*guesses)++;
        found = search(g, cell + 1, limit, found, first, guesses);
        g[cell] = '.';
    }
    return found;
}

SOLVER(honest) {
    char g[82]; memcpy(g, p, 81); g[81] = 0; *guesses = 0;
    return search(g, 0, limit, 0, solution, guesses);
}

/* like tdoku: a grid only with limit 1, and no guess count */
SOLVER(count_only) {
    char g[82], first[81]; size_t unused = 0; memcpy(g, p, 81);
    size_t n = search(g, 0, limit, 0, first, &unused);
    if (limit == 1 && n) memcpy(solution, first, 81);
    return n;
}

SOLVER(breaks_rule) {
    size_t n = honest(p, limit, config, solution, guesses);
    for (int k = 0; k < 81; k++) if (p[k] == '.') { char t = solution[k];  /* swap two blanks */
        for (int j = k + 1; j < 81; j++) if (p[j] == '.' && solution[j] != t) {
            solution[k] = solution[j]; solution[j] = t; return n; } }
    return n;
}

SOLVER(changes_given) {
    size_t n = honest(p, limit, config, solution, guesses);
    for (int k = 0; k < 81; k++)
        if (p[k] != '.') { solution[k] = p[k] == '9' ? '1' : p[k] + 1; break; }
    return n;
}

SOLVER(incomplete) {
    size_t n = honest(p, limit, config, solution, guesses);
    for (int k = 0; k < 81; k++) if (p[k] == '.') { solution[k] = '.'; break; }
    return n;
}

/* its search state in a global, as tdoku's: two threads at once would trample it */
static char shared[82];
SOLVER(global_state) {
    memcpy(shared, p, 81); shared[81] = 0; *guesses = 0;
    return search(shared, 0, limit, 0, solution, guesses);
}

SOLVER(claims_unique) {
    size_t n = honest(p, limit, config, solution, guesses);
    return n > 1 ? 1 : n;
}

/* the batch contract: the library says so, and the function takes every puzzle at once */
#define BATCH(name, each, skip_odd) \
    const char name##_sudoku_contract[] = "batch"; \
    void name(const char *ps, size_t count, size_t limit, uint32_t config, char *solutions, \
              size_t *counts, size_t *guesses) { \
        for (size_t i = 0; i < count; i++) \
            if (!(skip_odd && i % 2)) \
                counts[i] = each(ps + 82 * i, limit, config, solutions + 81 * i, guesses + i); \
    }
BATCH(honest_batch, honest, 0)
BATCH(count_only_batch, count_only, 0)
BATCH(skips_odd_batch, honest, 1)
const char not_a_contract_sudoku_contract[] = "stream";
SOLVER(not_a_contract) { return honest(p, limit, config, solution, guesses); }
"""

# one puzzle with a unique solution, one with two (two cells swapped in a unique one's blanks)
UNIQUE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
MULTIPLE = "2.9.4.7.3.....................................8.....4.......................1.6.5"
CLASHING = "55..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc) on this machine")
    folder = tmp_path_factory.mktemp("csolver")
    source = folder / "solver.c"
    source.write_text(SOLVER_C)
    built = folder / "libsolver.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(built), str(source)], check=True)
    return built


def _grids(*puzzles: str) -> np.ndarray:
    return np.array([[0 if c == "." else int(c) for c in p] for p in puzzles], dtype=np.uint8)


def _ask(library: Path, symbol: str, *puzzles: str, limit: int = 2):  # noqa: ANN202
    grids = _grids(*puzzles)
    return ask_solver(parse_spec(f"c:{library}:{symbol}"), grids, np.zeros(len(grids), bool), limit)


def test_an_honest_solver_gets_our_verdicts(library: Path) -> None:
    asked = _ask(library, "honest", UNIQUE, MULTIPLE, CLASHING)
    ours = solve_grids(_grids(UNIQUE, MULTIPLE, CLASHING))
    assert asked.found.verdicts.tolist() == [codes.SOLVED, codes.MULTIPLE, codes.INVALID]
    assert ours.verdicts.tolist() == asked.found.verdicts.tolist()
    assert (asked.found.solutions[0] == ours.solutions[0]).all()
    assert asked.kernel_agrees.tolist() == [1, 1, -1]
    assert asked.found.guesses[0] > 0 and asked.found.nodes[0] == -1  # nodes: not counted
    assert asked.found.solve_ns[0] > 0 and asked.found.solve_ns[2] == 0


def test_a_solver_that_writes_no_grid_when_counting_is_asked_again_for_one(library: Path) -> None:
    asked = _ask(library, "count_only", UNIQUE)
    assert asked.found.verdicts.tolist() == [codes.SOLVED]
    assert (asked.found.solutions[0] == solve_grids(_grids(UNIQUE)).solutions[0]).all()
    assert asked.found.guesses.tolist() == [-1]  # it reports none: null in the table


@pytest.mark.parametrize(
    ("symbol", "said"),
    [
        ("breaks_rule", "breaks a rule: "),
        ("changes_given", "changes the given 5 at r1c1 to 6"),
        ("incomplete", "incomplete: 1 cells blank"),
    ],
)
def test_a_wrong_grid_is_a_wrong_answer_with_a_sentence(
    library: Path, symbol: str, said: str
) -> None:
    asked = _ask(library, symbol, UNIQUE)
    assert asked.found.verdicts.tolist() == [codes.WRONG_ANSWER]
    assert said in asked.messages[0]


def test_a_batch_function_answers_as_the_per_puzzle_one(library: Path) -> None:
    """One call a batch; clashing givens never asked; grids fetched with limit 1 where a
    count came without one; times spread evenly."""
    puzzles = (UNIQUE, MULTIPLE, CLASHING, UNIQUE)
    each, batch = _ask(library, "honest", *puzzles), _ask(library, "honest_batch", *puzzles)
    assert batch.found.verdicts.tolist() == each.found.verdicts.tolist()
    assert np.array_equal(batch.found.solutions, each.found.solutions)
    assert np.array_equal(batch.found.guesses, each.found.guesses)
    asked = batch.found.solve_ns[[0, 1, 3]]
    assert (asked > 0).all() and len(set(asked.tolist())) == 1 and batch.found.solve_ns[2] == 0
    fetched = _ask(library, "count_only_batch", UNIQUE, MULTIPLE)
    assert fetched.found.verdicts.tolist() == [codes.SOLVED, codes.MULTIPLE]
    assert fetched.found.guesses.tolist() == [-1, -1]


def test_a_batch_function_that_leaves_a_count_unwritten_fails_that_row(library: Path) -> None:
    asked = _ask(library, "skips_odd_batch", UNIQUE, UNIQUE, UNIQUE)
    assert asked.found.verdicts.tolist() == [codes.SOLVED, codes.SOLVER_ERROR, codes.SOLVED]
    assert asked.messages[1] == "the solver wrote no count for this puzzle"


def test_a_contract_the_library_names_wrongly_is_one_error_line(library: Path) -> None:
    result = cli("solve", "-", "-o", "-", "--solver", f"c:{library}:not_a_contract")
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "not_a_contract_sudoku_contract is 'stream'")


def test_a_false_claim_of_uniqueness_is_caught_by_our_kernel(library: Path) -> None:
    asked = _ask(library, "claims_unique", MULTIPLE, UNIQUE)
    assert asked.found.verdicts.tolist() == [codes.SOLVED, codes.SOLVED]  # its grids are fine
    assert asked.kernel_agrees.tolist() == [0, 1]  # ... but the first is not unique


def test_solve_with_a_c_solver_end_to_end(library: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("\n".join([UNIQUE, MULTIPLE, CLASHING, "not a puzzle"]) + "\n")
    out = tmp_path / "out.parquet"
    result = cli("solve", source, "-o", out, "--solver", f"c:{library}:changes_given", "-q")
    assert result.exit_code == 0, result.stderr
    table = pl.read_parquet(out)
    assert table["verdict"].cast(pl.String).to_list() == [
        "wrong_answer", "wrong_answer", "invalid", "malformed"]  # fmt: skip
    assert table["nodes"].null_count() == 2 and table["kernel_agrees"].null_count() == 4
    assert "changes the given" in table["error"][0]
    assert table["solution"][0] is not None  # what it returned is shown beside the sentence
    import json

    import pyarrow.parquet as pq

    meta = json.loads(pq.read_metadata(out).metadata[b"sudoku_pipeline"])
    assert meta["solver"]["spec"] == f"c:{library}:changes_given"
    assert meta["solver"]["version"] is None and meta["solver"]["bytes"] > 0
    assert meta["options"]["solver"] == f"c:{library}:changes_given"
    assert meta["executor"] == "local"  # threads: each one's solver runs in its own process


def test_solve_batch_takes_a_solver(library: Path) -> None:
    from pipeline import solve_batch

    frame = solve_batch([UNIQUE, MULTIPLE], solver=f"c:{library}:honest")
    assert frame["verdict"].cast(pl.String).to_list() == ["solved", "multiple"]
    assert frame["kernel_agrees"].to_list() == [True, True]


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("c:{lib}:no_such_symbol", "has no function no_such_symbol"),
        ("c:/no/such/lib.so:honest", "cannot load /no/such/lib.so"),
        ("c:{lib}", "should read c:LIBRARY:SYMBOL"),
    ],  # fmt: skip
)
def test_a_missing_library_or_symbol_is_one_error_line(
    library: Path, tmp_path: Path, spec: str, said: str
) -> None:
    source = tmp_path / "in.txt"
    source.write_text(UNIQUE + "\n")
    out = tmp_path / "out.parquet"
    result = cli("solve", source, "-o", out, "--solver", spec.format(lib=library))
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, said)
    assert not out.exists()


@pytest.mark.parametrize("name", ["puzzles3_magictour_top1465.txt", "kaggle1m_first9999.csv"])
def test_tdoku_through_the_pipeline_agrees_with_our_verdicts(name: str) -> None:
    lib = tdoku_path()
    if lib is None:
        pytest.skip(TDOKU_SKIP)
    grids = shared_puzzles(name, limit=300)
    ours = solve_grids(grids)
    spec = parse_spec(f"c:{lib}:TdokuSolverDpllTriadSimd")
    theirs = ask_solver(spec, grids, np.zeros(len(grids), bool))
    assert theirs.found.verdicts.tolist() == ours.verdicts.tolist()
    assert (theirs.found.solutions == ours.solutions).all()
    assert (theirs.kernel_agrees == 1).all()
    assert (theirs.found.guesses >= 0).all()
    assert SHARED_DATA.exists() and format_grids(grids[:1])  # the set was read as solve reads it


# --- bench and report: a solver from outside beside a strategy ---------------------------------


def _corpus(tmp_path: Path) -> Path:
    source = tmp_path / "corpus.txt"
    source.write_text("\n".join([UNIQUE, MULTIPLE, CLASHING]) + "\n")
    return source


def test_bench_measures_a_solver_beside_a_strategy_and_checks_it_after_the_clock(
    library: Path, tmp_path: Path
) -> None:
    from pipeline.jobs.bench.job import bench

    spec = f"c:{library}:count_only"  # writes no grid while counting: fetched after the clock
    out = tmp_path / "bench.parquet"
    result = bench(_corpus(tmp_path), "fast", output=out, repeats=1, solvers=[spec])
    assert [r.strategy for r in result.rows] == ["fast", spec]
    mine = result.rows[1]
    assert mine.nodes_per_puzzle is None and mine.guesses_per_puzzle is None  # not reported
    assert mine.us_per_puzzle is not None and mine.us_per_puzzle > 0
    table = pl.read_parquet(out)
    theirs = table.filter(pl.col("strategy") == spec)
    assert theirs["verdict"].cast(pl.String).to_list() == ["solved", "multiple", "invalid"]
    assert theirs["kernel_agrees"].to_list() == [True, True, None]
    assert table.filter(pl.col("strategy") == "fast")["kernel_agrees"].null_count() == 3
    assert result.metadata["solvers"][0]["spec"] == spec
    assert "solvers from outside" in result.to_markdown()


def test_bench_with_only_solvers_measures_no_strategy(library: Path, tmp_path: Path) -> None:
    result = cli("bench", _corpus(tmp_path), "--solver", f"c:{library}:honest", "--solver",
                 "fast", "--repeats", "1", "-q")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert f"c:{library}:honest" in result.stdout and "| mrv |" not in result.stdout


def test_bench_refuses_a_missing_symbol_in_one_line(library: Path, tmp_path: Path) -> None:
    result = cli("bench", _corpus(tmp_path), "--solver", f"c:{library}:nope", "-q")
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "has no function nope")


def test_report_shows_a_solver_beside_a_strategy_joined_by_puzzle(
    library: Path, tmp_path: Path
) -> None:
    from pipeline.report import report

    source = _corpus(tmp_path)
    mine, ours = tmp_path / "mine.parquet", tmp_path / "ours.parquet"
    assert cli("solve", source, "-o", mine, "--solver", f"c:{library}:honest", "-q").exit_code == 0
    assert cli("solve", source, "-o", ours, "-q").exit_code == 0
    summary = report([ours, mine]).to_dict()
    labels = [r["label"] for r in summary["runs"]]
    assert labels == ["corpus / fast", f"corpus / c:{library}:honest"]
    theirs = summary["runs"][1]
    assert theirs["stats"]["nodes"]["p50"] is None  # not counted: not made up
    assert theirs["stats"]["guesses"]["p50"] is not None
    (pair,) = summary["comparisons"]
    assert pair["compared_rows"] == 2 and pair["nodes_p50"] is None and pair["time_p50"] > 0
    pytest.importorskip("matplotlib")
    page = tmp_path / "report.html"
    report([ours, mine], html=page)  # plots of nodes leave out what was not counted
    assert spec_in(page.read_text(), f"c:{library}:honest")


def spec_in(text: str, spec: str) -> bool:
    return spec in text or spec.replace("/", "&#x2F;") in text


class _Chosen(Exception):
    pass


@pytest.mark.parametrize(
    ("holds_gil", "thread_safe", "given", "chosen"),
    [(True, True, None, "processes"), (True, True, "local", "local"),
     (False, True, None, None), (False, False, None, "processes")],
)  # fmt: skip
def test_a_solver_holding_the_gil_or_not_thread_safe_runs_on_processes_unless_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, holds_gil: bool, thread_safe: bool,
    given: str | None, chosen: str | None,
) -> None:  # fmt: skip
    import pipeline.jobs.solve.job as job
    from pipeline.plugins import parse_spec as spec_of

    class Stub:
        spec = spec_of("python:mine:solve")

        def __init__(self) -> None:
            self.holds_gil, self.thread_safe = holds_gil, thread_safe

        def version(self) -> str | None:
            return "1.0"

    def start_job(*args: object, **kwargs: object) -> None:
        raise _Chosen(args[3].get("executor"))  # type: ignore[attr-defined]  # (job, in, out, options)

    monkeypatch.setattr(job, "open_solver", lambda spec: Stub())
    monkeypatch.setattr(job, "start_job", start_job)
    with pytest.raises(_Chosen) as said:
        job.solve_file(tmp_path / "x.txt", solver="python:mine:solve", executor=given)  # type: ignore[arg-type]
    assert said.value.args[0] == chosen


def test_threads_each_have_their_own_process_of_a_c_solver(library: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from pipeline.plugins.open import open_adapter

    spec = f"c:{library}:global_state"  # not thread-safe: its search state is a global
    grids = _grids(*[UNIQUE, MULTIPLE] * 1000)
    skip = np.zeros(len(grids), bool)
    with ThreadPoolExecutor(2) as pool:  # each thread opens its own adapter, as workers do
        runs = list(pool.map(lambda _: open_adapter(spec).answer(grids, skip, 2), range(4)))
    for answers in runs:
        assert answers.counts.tolist() == [1, 2] * 1000


def test_every_claim_is_judged_by_the_rules_alone() -> None:
    from pipeline.plugins import Answers
    from pipeline.plugins.answers import judge_answers

    ours = solve_grids(_grids(UNIQUE))
    grids = _grids(UNIQUE, UNIQUE, UNIQUE, UNIQUE, UNIQUE)
    solutions = np.zeros((5, 81), np.uint8)
    solutions[[1, 3]] = ours.solutions[0]
    counts = np.array([0, 0, 1, -1, 1])  # none; none with a grid; one without; unsaid; crashed
    errors = [None, None, None, None, "the solver crashed (exit code -11)"]
    n = np.zeros(5, np.int64)
    judged = judge_answers(grids, np.ones(5, bool), Answers(solutions, counts, None, n, errors), 2)
    assert judged.verdicts.tolist() == [codes.UNSOLVABLE, codes.WRONG_ANSWER, codes.WRONG_ANSWER,
                                        codes.FOUND, codes.SOLVER_ERROR]  # fmt: skip
    assert judged.messages == {
        1: "the solver says there is no solution but returned a valid grid",
        2: "the solver says it found 1 solution(s) but returned no grid",
        4: "the solver crashed (exit code -11)",
    }
    assert judged.kernel_agrees.tolist() == [0, -1, -1, -1, -1]  # it has one: "none" is wrong
