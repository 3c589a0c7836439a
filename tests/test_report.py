"""report: figures from result files (never a re-solve), checked against polars computed here;
runs joined by puzzle (canonical form when both files have it), never by row; corpora told
apart by the puzzles they share; rates labelled; the hardest puzzles printed whole; one-line
errors for files that are not results, and for --html without matplotlib. The HTML page and
its plots are checked in test_report_html.py."""

import importlib.util
import json
import math
import re
import sys
from fractions import Fraction

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import pipeline
from pipeline.cli import app
from pipeline.grid import format_grids, parse_puzzles
from pipeline.jobs.solve.job import solve_file
from pipeline.report import MATPLOTLIB_HINT, ReportError, render_text, report
from pipeline.report.text import PER_PUZZLE, SIDE_BY_SIDE, count, ratio
from pipeline.results.schema import empty_results
from pipeline.symmetry import random_symmetries

NOT_SEARCHED = ["invalid", "malformed"]
BAD_ROWS = [("." * 81, "multiple"), ("11" + "." * 79, "invalid"), ("abc", "malformed"),
            ("12345678." + "........9" + "." * 63, "unsolvable")]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """One corpus (generated puzzles, two clue ranges, a row of each bad verdict) solved with
    `fast` and with `mrv` by the real `solve` job, and another corpus solved with `fast`:
    result files with their metadata."""
    folder = tmp_path_factory.mktemp("report")
    corpus = pl.concat([pipeline.generate(120, seed=7), pipeline.generate(40, seed=8, clues=30)])
    bad = pl.DataFrame({"puzzle": [p for p, _ in BAD_ROWS]})
    corpus = pl.concat([corpus.select("puzzle"), bad]).with_row_index("id", offset=1000)
    corpus.with_columns(pl.col("id").cast(pl.String)).write_csv(folder / "corpus.csv")
    pipeline.generate(60, seed=9, clues=32).write_csv(folder / "easy.csv")
    paths = {}
    for name, source, strategy in (("fast", "corpus", "fast"), ("mrv", "corpus", "mrv"),
                                   ("easy", "easy", "fast")):  # fmt: skip
        paths[name] = folder / f"{name}.parquet"
        solve_file(
            folder / f"{source}.csv", paths[name], strategy=strategy, workers=1, progress=False
        )
    return paths


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def section(text: str, title: str) -> list[list[str]]:
    """The table under `title` in the terminal summary: one list of cells per line."""
    lines = text.splitlines()
    start = lines.index(title) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def searched(df: pl.DataFrame) -> pl.DataFrame:
    return df.filter(~pl.col("verdict").cast(pl.String).is_in(NOT_SEARCHED))


def q(series: pl.Series, p: float) -> float:
    return series.quantile(p, interpolation="nearest")


def read(path) -> pl.DataFrame:
    return pl.read_parquet(path).with_columns(pl.col("verdict").cast(pl.String))


def write_like(frame: pl.DataFrame, path, like) -> None:
    """`frame` as a result file at `path`, with the metadata of the result file `like`."""
    metadata = pq.read_schema(like).metadata
    pq.write_table(frame.to_arrow().replace_schema_metadata(metadata), path)


def half_up(value: Fraction | int, places: int = 1) -> str:
    """An exact value as printed on paper: rounded half up to `places` decimals, with
    thousands separators (integer arithmetic only: the reference the report must agree with)."""
    units = math.floor(Fraction(value) * 10**places + Fraction(1, 2))
    whole, part = divmod(units, 10**places)
    return f"{whole:,}" + (f".{part:0{places}d}" if places else "")


def observed(values: pl.Series, p: float) -> int:
    """The `p` quantile, nearest rank: one of `values` (an integer, exact)."""
    return int(q(values, p))


def test_every_printed_figure_equals_an_exact_computation(results):
    """Each figure of the terminal summary, computed here from the rows with integers and
    fractions and rounded half up: equal, whatever times the kernel measured."""
    path = results["fast"]
    run = cli("report", path)
    assert run.exit_code == 0, run.output
    text = run.stdout
    df = read(path)
    meta = json.loads(pq.read_schema(path).metadata[b"sudoku_pipeline"])
    done = searched(df)
    n = done.height

    def us(ns: int) -> str:
        return half_up(Fraction(ns, 1000))

    def pct(part: int, whole: int) -> str:
        return half_up(Fraction(100 * part, whole))

    assert f"rows: {df.height:,} from " in text
    kernel_ns = done["solve_ns"].sum()
    assert (
        f"kernel rate: {half_up(Fraction(n * 10**9, kernel_ns), 0)} puzzles/s (kernel, per "
        f"core: {n:,} searched rows in {half_up(Fraction(kernel_ns, 10**9), 3)} s of kernel "
        "time)"
    ) in text
    rate = half_up(Fraction(str(meta["rows_per_s"])), 0)  # as recorded: a decimal
    wall = half_up(Fraction(str(meta["wall_s"])), 2)
    assert (
        f"wall rate: {rate} rows/s (wall, 1 worker, with start-up: wall {wall} s; solve "
    ) in text
    assert "options: strategy fast, solutions 2, max_nodes none" in text

    verdict_line = next(line for line in text.splitlines() if line.startswith("verdicts:"))
    printed = {
        v: (n, pct) for v, n, pct in re.findall(r"(\w+) ([\d,]+) \(([\d.]+)%\)", verdict_line)
    }
    counts = dict(df.group_by("verdict").len().rows())
    assert printed == {v: (f"{k:,}", pct(k, df.height)) for v, k in counts.items()}
    assert set(counts) == {"solved", "multiple", "invalid", "malformed", "unsolvable"}

    def no_guess(rows: pl.DataFrame) -> int:
        return rows.filter((pl.col("verdict") == "solved") & (pl.col("guesses") == 0)).height

    assert (
        f"searched: {n:,} rows; solved without guessing: {no_guess(done):,} "
        f"({pct(no_guess(done), n)}%)"
    ) in text

    expected = []
    for title, column, places, scale in (
        ("time us", "solve_ns", 1, 1000),
        ("nodes", "nodes", 0, 1),
        ("guesses", "guesses", 0, 1),
    ):
        values = done[column]
        figures = [*(observed(values, p) for p in (0.5, 0.9, 0.99)), values.max()]
        expected.append(
            [
                title,
                *(half_up(Fraction(v, scale), places) for v in figures),
                half_up(Fraction(values.sum(), values.len() * scale)),
            ]
        )
    assert section(text, "percentiles over searched rows:")[1:] == expected

    by_clues = []
    for clues in sorted(done["clues"].unique().to_list()):
        g = done.filter(pl.col("clues") == clues)
        nodes, times = g["nodes"], g["solve_ns"]
        by_clues.append(
            [
                str(clues),
                f"{g.height:,}",
                pct(no_guess(g), g.height),
                f"{observed(nodes, 0.5):,}",
                f"{observed(nodes, 0.9):,}",
                us(observed(times, 0.5)),
                us(observed(times, 0.9)),
            ]
        )
    assert section(text, "by clue count:")[1:] == by_clues
    assert len(by_clues) > 3

    def hardest(by):
        top = done.sort([*by, "row"], descending=[True] * len(by) + [False]).head(10)
        return [
            [
                str(r["row"]),
                str(r["id"]),  # integer ids from the CSV stay integers in the results
                str(r["clues"]),
                r["verdict"],
                f"{r['nodes']:,}",
                f"{r['guesses']:,}",
                us(r["solve_ns"]),
                r["puzzle"],  # the puzzle itself, whole, to copy
            ]
            for r in top.iter_rows(named=True)
        ]

    assert section(text, "hardest 10 by nodes:")[1:] == hardest(["nodes", "solve_ns"])
    assert section(text, "hardest 10 by time:")[1:] == hardest(["solve_ns"])
    assert all(len(row[-1]) == 81 for row in hardest(["solve_ns"]))


def test_json_holds_the_numbers_alone(results):
    run = cli("report", results["fast"], "--json")
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    (figures,) = data["runs"]
    df = read(results["fast"])
    done = searched(df)
    assert figures["rows"] == df.height
    assert figures["stats"]["nodes"]["p99"] == q(done["nodes"], 0.99)
    assert figures["stats"]["time_us"]["max"] == done["solve_ns"].max() / 1000
    assert figures["one_node"] == done.filter(pl.col("nodes") == 1).height
    assert figures["metadata"]["strategy"] == "fast"
    assert data["comparisons"] == []
    assert data["corpora"] == [
        {"name": "corpus", "runs": ["corpus / fast"], "baseline": "corpus / fast",
         "apart_from": None, "common_with_it": None, "common_pct": None}
    ]  # fmt: skip


def expected_ratios(base: pl.DataFrame, other: pl.DataFrame, key: str = "puzzle") -> list[str]:
    """The ratio table's cells after run and baseline, computed here from a join on `key`."""
    joined = searched(base).join(searched(other), on=key, suffix="_b")
    nodes = joined["nodes_b"] / joined["nodes"]
    time = joined["solve_ns_b"] / joined["solve_ns"]
    return [
        count(joined.height),
        ratio(q(nodes, 0.5)),
        ratio(math.exp(nodes.log().mean())),
        ratio(q(nodes, 0.9)),
        half_up(Fraction(100 * (nodes < 1).sum(), nodes.len())),
        ratio(q(time, 0.5)),
        ratio(math.exp(time.log().mean())),
        ratio(q(time, 0.9)),
        half_up(Fraction(100 * (time < 1).sum(), time.len())),
    ]


def test_runs_are_joined_by_puzzle_not_by_row(results, tmp_path):
    """The second file is shuffled, renumbered (its `row` no longer names the same puzzle)
    and lacks 10 rows: the ratios come from the join on the puzzle string."""
    mrv = read(results["mrv"])
    moved = mrv.sample(fraction=1.0, shuffle=True, seed=1).tail(-10)
    moved = moved.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("row"))
    path = tmp_path / "mrv.parquet"
    write_like(moved, path, results["mrv"])

    run = cli("report", results["fast"], path)
    assert run.exit_code == 0, run.output
    text = run.stdout
    side = section(text, SIDE_BY_SIDE)
    assert [r[0] for r in side[1:3]] == ["corpus / fast", "corpus / mrv"]
    rows = section(text, PER_PUZZLE)
    assert rows[1] == ["corpus / mrv", "corpus / fast", *expected_ratios(read(results["fast"]),
                                                                         moved)]  # fmt: skip
    common = moved.filter(pl.col("verdict") != "malformed").height
    assert (
        f"corpus / mrv and corpus / fast: joined by puzzle string (no `canonical` column in "
        f"both files); {common} puzzles in both"
    ) in text
    missing = read(results["fast"]).filter(pl.col("verdict") != "malformed").height - common
    assert f"note: {missing} puzzles only in corpus / fast, 0 only in corpus / mrv" in text
    fast = read(results["fast"])
    assert q(searched(moved).join(searched(fast), on="puzzle")["nodes"], 0.5) > q(
        searched(fast)["nodes"], 0.5
    )  # mrv searches more than fast on these puzzles


def test_the_canonical_column_is_the_key_when_both_files_have_it(results, tmp_path):
    """Here `canonical` is hand-made: the second file's puzzles are transformed by a random
    symmetry, and both files carry the original string as their canonical form. With the
    column in both files the runs are one corpus; with it in one only, the puzzle strings
    are the key, and nothing matches."""
    fast, mrv = read(results["fast"]), read(results["mrv"])
    grids = parse_puzzles(mrv["puzzle"])
    moved_puzzles = format_grids(random_symmetries(grids.grids, np.random.default_rng(3)))
    transformed = mrv.with_columns(
        pl.Series("puzzle", moved_puzzles.to_pylist()).alias("puzzle"),
        pl.col("puzzle").alias("canonical"),
    )
    assert (transformed["puzzle"] != mrv["puzzle"]).sum() > 150
    with_canonical = tmp_path / "fast.parquet"
    write_like(fast.with_columns(pl.col("puzzle").alias("canonical")), with_canonical,
               results["fast"])  # fmt: skip
    moved = tmp_path / "mrv.parquet"
    write_like(transformed, moved, results["mrv"])

    rep = report([with_canonical, moved])
    (c,) = rep.comparisons
    assert c["key"] == "canonical" and c["same_corpus"]
    text = render_text(rep)
    cells = section(text, PER_PUZZLE)[1][2:]
    assert cells == expected_ratios(fast.with_columns(pl.col("puzzle").alias("canonical")),
                                    transformed, key="canonical")  # fmt: skip
    assert "joined by canonical form (the `canonical` column of both files)" in text

    rep = report([results["fast"], moved])  # one file without the column: puzzle strings
    assert rep.comparisons == [] and len(rep.corpora) == 2
    assert "corpus / mrv and corpus / fast are different corpora: they share" in render_text(rep)


def test_repeated_puzzles_are_compared_once(results, tmp_path):
    """A corpus that holds every puzzle twice: each is compared once, at its first row, and
    the report says how many rows it set aside."""
    mrv = read(results["mrv"])
    doubled = pl.concat([mrv, mrv]).with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("row")
    )
    path = tmp_path / "doubled.parquet"
    write_like(doubled, path, results["mrv"])
    rep = report([results["fast"], path])
    (c,) = rep.comparisons
    keyed = mrv.filter(pl.col("verdict") != "malformed").height
    assert (c["run_repeats"], c["baseline_repeats"], c["common"]) == (keyed, 0, keyed)
    assert c["compared_rows"] == searched(mrv).height
    assert (
        f"note: corpus / mrv has {keyed} rows repeating an earlier puzzle: each puzzle is "
        "compared once, at its first row"
    ) in render_text(rep)


def test_different_corpora_are_side_by_side_without_ratios(results):
    rep = report([results["fast"], results["easy"], results["mrv"]])
    assert [c.name for c in rep.corpora] == ["corpus", "easy"]
    assert [r.label for r in rep.corpora[0].runs] == ["corpus / fast", "corpus / mrv"]
    assert [(c["run"], c["baseline"]) for c in rep.comparisons] == [("corpus / mrv",
                                                                      "corpus / fast")]  # fmt: skip
    text = render_text(rep)
    assert [r[1] for r in section(text, SIDE_BY_SIDE)[1:4]] == ["corpus", "easy", "corpus"]
    assert (
        "easy / fast and corpus / fast are different corpora: they share 0 puzzles (0.0% of "
        "the smaller; one corpus takes 50%), so they are shown side by side without "
        "per-puzzle ratios"
    ) in text
    assert [r[0] for r in section(text, PER_PUZZLE)[1:2]] == ["corpus / mrv"]


def test_a_run_of_the_first_rows_is_of_the_same_corpus(results, tmp_path):
    """All the puzzles of the smaller run are in the other: one corpus, ratios over them."""
    head = read(results["mrv"]).head(50)
    path = tmp_path / "head.parquet"
    write_like(head, path, results["mrv"])
    (c,) = report([results["fast"], path]).comparisons
    assert c["same_corpus"] and c["common"] == 50 and c["common_pct"] == 100.0
    assert (
        c["only_in_baseline"]
        == read(results["fast"]).filter(pl.col("verdict") != "malformed").height - 50
    )


def test_both_rates_are_labelled(results):
    text = render_text(report([results["fast"], results["mrv"]]))
    header, fast, mrv = section(text, SIDE_BY_SIDE)[:3]
    assert header[3:5] == ["kernel/s", "wall rows/s"]
    for row, path in ((fast, results["fast"]), (mrv, results["mrv"])):
        done = searched(read(path))
        meta = json.loads(pq.read_schema(path).metadata[b"sudoku_pipeline"])
        assert row[3] == half_up(Fraction(done.height * 10**9, done["solve_ns"].sum()), 0)
        assert row[4] == half_up(Fraction(str(meta["rows_per_s"])), 0)
    assert "kernel/s: searched rows over their summed kernel time (solve_ns), one core" in text
    assert "wall rows/s: rows over the run's wall time as its file records it (wall, 1 " in text


def test_bad_files_give_one_line_and_exit_code_2(results, tmp_path):
    text_file = tmp_path / "notes.parquet"
    text_file.write_text("not parquet at all\n")
    foreign = tmp_path / "foreign.parquet"
    pl.DataFrame({"puzzle": ["." * 81], "nodes": [1]}).write_parquet(foreign)
    cases = {
        tmp_path / "missing.parquet": "no such file",
        text_file: "not a Parquet file",
        foreign: "not a sudoku-pipeline result file (no column row, verdict, clues, guesses",
        tmp_path: "is a directory",
    }
    for path, message in cases.items():
        run = cli("report", results["fast"], path)
        assert run.exit_code == 2, (path, run.output)
        assert run.stdout == ""
        lines = run.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), run.stderr
        assert message in lines[0]
        assert "Traceback" not in run.output
    run = cli("report", results["fast"], "--html", tmp_path / "no" / "r.html")
    assert run.exit_code == 2 and run.stderr.startswith("error: ")
    assert "no such directory" in run.stderr
    with pytest.raises(ReportError, match="no such file"):
        report(tmp_path / "missing.parquet")


def test_html_without_matplotlib_is_a_one_line_hint(results, tmp_path, monkeypatch):
    """matplotlib is the `report` extra: without it, --html says how to get it; the terminal
    report does not need it."""
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    drawing = ("pipeline.report.html", "pipeline.report.plots", "pipeline.report.figures")
    for name in [m for m in sys.modules if m in drawing]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    page = tmp_path / "r.html"
    run = cli("report", results["fast"], "--html", page)
    assert run.exit_code == 2 and run.stdout == ""
    assert run.stderr == f"error: {MATPLOTLIB_HINT}\n"
    assert MATPLOTLIB_HINT == "--html needs matplotlib: pip install 'sudoku-pipeline[report]'"
    assert not page.exists()
    assert cli("report", results["fast"]).exit_code == 0


def test_an_empty_result_file_reports_no_rows(tmp_path):
    path = tmp_path / "empty.parquet"
    pq.write_table(empty_results(), path)
    rep = report(path, html=tmp_path / "empty.html")
    assert "verdicts: no rows" in render_text(rep)
    assert rep.to_dict()["runs"][0]["stats"]["nodes"]["p50"] is None
    assert (tmp_path / "empty.html").stat().st_size > 1000


def test_rated_results_show_puzzles_and_effort_by_grade(tmp_path):
    corpus = tmp_path / "rated.csv"
    pipeline.generate(80, seed=21).select("puzzle").write_csv(corpus)
    out = tmp_path / "rated.parquet"
    solve_file(corpus, out, rate=True, rate_samples=4, workers=1, progress=False)
    frame = pl.read_parquet(out)

    rep = report(out, html=tmp_path / "rated.html")

    figures = rep.to_dict()["runs"][0]["ratings"]
    grades = frame["grade"].cast(pl.String).value_counts()
    assert {g["grade"]: g["rows"] for g in figures["by_grade"]} == dict(grades.iter_rows())
    assert [g["grade"] for g in figures["by_grade"]] == sorted(
        (g["grade"] for g in figures["by_grade"]), key=list(pipeline.GRADES).index
    )  # ladder order, easiest first
    assert figures["difficulty"]["p50"] == frame["difficulty"].quantile(0.5, "nearest")
    text = render_text(rep)
    assert "by grade (80 rated puzzles):" in text and "difficulty (mean guesses" in text
    assert "Puzzles and effort by grade" in (tmp_path / "rated.html").read_text()
    unrated = tmp_path / "unrated.parquet"
    solve_file(corpus, unrated, workers=1, progress=False)
    assert report(unrated).to_dict()["runs"][0]["ratings"] is None
    assert "by grade" not in render_text(report(unrated))


def handmade(path, solve_ns: list[int], guesses: list[int], clues: int = 25, **columns) -> None:
    """A result file written by hand: one `solved` row per time, each with its guesses (one
    node without a guess, three with), `clues` givens; `columns`: more columns."""
    n = len(solve_ns)
    pl.DataFrame(
        {
            "row": range(n),
            "puzzle": [f"{i:03d}" + "." * 78 for i in range(n)],
            "verdict": ["solved"] * n,
            "clues": [clues] * n,
            "nodes": [1 if g == 0 else 3 for g in guesses],
            "guesses": guesses,
            "solve_ns": solve_ns,
            **columns,
        }
    ).write_parquet(path)


def test_figures_on_rounding_edges_are_printed_the_same_everywhere(tmp_path):
    """12950 ns is 12.95 us, and 23 of 80 rows is 28.75%, 57 of 80 71.25%: ties, printed
    rounded half up, as on paper (13.0, 28.8, 71.3), in every table. Before, the figures were
    computed two ways: the percentile table printed 12.9 (Python's 12950 / 1000 is the double
    just below 12.95), the hardest table 13.0 (polars' column / 1000 is a multiplication by
    0.001: 12.950000000000001), and the by-clue % no guess 28.7 (polars' 100 * mean(bool):
    28.749999999999996) under a summary line of 28.8."""
    path = tmp_path / "edges.parquet"
    guesses = [0] * 23 + [1] * 57
    grades = ["hidden_single"] * 23 + ["search"] * 57
    handmade(path, [12950] * 80, guesses, grade=grades, difficulty=[0.0] * 23 + [1.0] * 57)
    assert half_up(Fraction(12950, 1000)) == "13.0"

    rep = report(path)
    text = render_text(rep)

    assert "solved without guessing: 23 (28.8%)" in text
    percentiles = section(text, "percentiles over searched rows:")
    assert percentiles[1] == ["time us", "13.0", "13.0", "13.0", "13.0", "13.0"]
    (by_clue,) = section(text, "by clue count:")[1:]
    assert by_clue == ["25", "80", "28.8", "3", "3", "13.0", "13.0"]
    grades_table = section(text, "by grade (80 rated puzzles):")[1:3]
    assert [row[:5] for row in grades_table] == [["hidden_single", "23", "28.8", "1", "13.0"],
                                                 ["search", "57", "71.3", "3", "13.0"]]  # fmt: skip
    for title in ("hardest 10 by nodes:", "hardest 10 by time:"):
        assert {row[6] for row in section(text, title)[1:]} == {"13.0"}
    figures = json.loads(rep.to_json())["runs"][0]
    assert figures["by_clues"][0]["no_guess_pct"] == 28.75
    assert figures["by_clues"][0]["time_p50_us"] == 12.95
    assert figures["hardest_by_time"][0]["time_us"] == 12.95
    assert figures["stats"]["time_us"]["mean"] == 12.95


def test_percentiles_are_observed_values_in_every_table(tmp_path):
    """One definition of p50 (nearest rank, an observed value) in the by-grade table too: the
    median of 1, 3 (2 nodes, 2.0 us) is no run's figure."""
    path = tmp_path / "two.parquet"
    handmade(path, [1000, 3000], [0, 1], grade=["naked_single"] * 2, difficulty=[0.0, 1.0])
    figures = report(path).to_dict()["runs"][0]
    (grade,) = figures["ratings"]["by_grade"]
    p50 = figures["stats"]
    assert (grade["nodes_p50"], grade["time_p50_us"]) == (p50["nodes"]["p50"],
                                                           p50["time_us"]["p50"])  # fmt: skip
    assert grade["nodes_p50"] in (1, 3) and grade["time_p50_us"] in (1.0, 3.0)


def with_metadata(path, like, change) -> None:
    """The result file `like` again at `path`, its metadata changed by `change(meta)`."""
    table = pq.read_table(like)
    meta = json.loads(table.schema.metadata[b"sudoku_pipeline"])
    change(meta)
    pq.write_table(table.replace_schema_metadata({"sudoku_pipeline": json.dumps(meta)}), path)


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("rows_per_s", lambda m: m.update(rows_per_s="12,345/s")),
        ("wall_s", lambda m: m.update(wall_s=[1.5])),
        ("workers", lambda m: m.update(workers="two")),
        ("options", lambda m: m.update(options=["fast"])),
        ("options.max_nodes", lambda m: m["options"].update(max_nodes="none")),
        ("input.path", lambda m: m["input"].update(path=7)),
    ],
)
def test_metadata_of_the_wrong_type_is_left_out_with_a_note(results, tmp_path, field, change):
    """A result file whose metadata is not what `solve` wrote: the field is left out, a note
    says so, the figures of the rows are all there; never a traceback."""
    path = tmp_path / "odd.parquet"
    with_metadata(path, results["fast"], change)

    run = cli("report", path)

    assert run.exit_code == 0, run.output
    notes = [line for line in run.stdout.splitlines() if line.startswith("note: metadata")]
    assert len(notes) == 1 and f" {field} " in notes[0], run.stdout
    assert "ignored" in notes[0]
    assert "percentiles over searched rows:" in run.stdout
    data = json.loads(cli("report", path, "--json").stdout)
    assert data["runs"][0]["notes"] == [notes[0].removeprefix("note: ")]


def test_a_bench_file_whose_runs_are_not_a_list_is_reported(results, tmp_path):
    """`runs` of a bench file's metadata (each dataset x strategy's wall time) as a number."""
    path = tmp_path / "bench.parquet"
    frame = read(results["fast"]).with_columns(dataset=pl.lit("corpus"), strategy=pl.lit("fast"))
    write_like(frame, path, results["fast"])
    odd = tmp_path / "odd.parquet"
    with_metadata(odd, path, lambda m: m.update(command="bench", runs=3))

    run = cli("report", odd)

    assert run.exit_code == 0, run.output
    assert "== corpus / fast" in run.stdout
    assert "note: metadata runs is a number, not a list: ignored" in run.stdout
    if importlib.util.find_spec("matplotlib"):
        report(odd, html=tmp_path / "odd.html")
        page = (tmp_path / "odd.html").read_text()
        assert "note: metadata runs is a number, not a list: ignored" in page


def test_html_over_somebody_elses_file_only_with_force(results, tmp_path):
    pytest.importorskip("matplotlib")
    page = tmp_path / "notes.html"
    page.write_text("<p>my notes</p>\n")

    refused = cli("report", results["fast"], "--html", page)

    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "use --force to replace it" in refused.stderr
    assert page.read_text() == "<p>my notes</p>\n"
    forced = cli("report", results["fast"], "--html", page, "--force")
    assert forced.exit_code == 0, forced.output
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert cli("report", results["fast"], "--html", page).exit_code == 0  # our page: replaced


def test_html_over_a_result_file_says_what_it_is(results, tmp_path):
    """A result of `solve` is this tool's, but not a page: refused, saying what it is; one of
    the report's own inputs is refused even with --force."""
    pytest.importorskip("matplotlib")
    other = tmp_path / "mrv.parquet"
    other.write_bytes(results["mrv"].read_bytes())

    refused = cli("report", results["fast"], "--html", other)

    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"error: {other}: is a Parquet result of sudoku-pipeline solve, not an HTML report; "
        "refused: choose another name, or use --force to replace it\n"
    )
    assert other.read_bytes() == results["mrv"].read_bytes()
    own_input = cli("report", results["fast"], other, "--html", other, "--force")
    assert own_input.exit_code == 2 and "will not write over an input" in own_input.stderr
    assert other.read_bytes() == results["mrv"].read_bytes()


def test_a_result_file_whose_name_is_not_utf8_is_reported(results, tmp_path):
    """A name that was not UTF-8 on disk (`caf\\xe9.parquet`) reaches Python with surrogates,
    which pyarrow cannot encode: the report reads it all the same, text and page."""
    import os
    import shutil

    name = os.fsdecode(b"caf\xe9.parquet")
    shutil.copy(results["fast"], tmp_path / name)
    page = tmp_path / os.fsdecode(b"caf\xe9.html")

    rep = report(tmp_path / name, html=page)

    assert rep.to_dict()["runs"][0]["rows"] == pl.read_parquet(results["fast"]).height
    assert page.stat().st_size > 1000
