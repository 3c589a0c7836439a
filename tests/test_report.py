"""report: figures from result files (never a re-solve), checked against polars computed here;
comparisons joined on row; one-line errors for files that are not results; the HTML report in
a real headless Chromium (no console errors, every plot decoded and visible, a screenshot)."""

import json
import math
import os
import re
import shutil
import tempfile
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import pipeline
from pipeline.cli import app
from pipeline.jobs.results import empty_results
from pipeline.jobs.solve import solve_file
from pipeline.report import ReportError, render_text, report
from pipeline.report.text import count, decimal, ratio

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
NOT_SEARCHED = ["invalid", "malformed"]
BAD_ROWS = [("." * 81, "multiple"), ("11" + "." * 79, "invalid"), ("abc", "malformed"),
            ("12345678." + "........9" + "." * 63, "unsolvable")]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """One corpus (generated puzzles, two clue ranges, a row of each bad verdict) solved with
    `fast` and with `mrv` by the real `solve` job: two result files with their metadata."""
    folder = tmp_path_factory.mktemp("report")
    corpus = pl.concat([pipeline.generate(120, seed=7), pipeline.generate(40, seed=8, clues=30)])
    bad = pl.DataFrame({"puzzle": [p for p, _ in BAD_ROWS]})
    corpus = pl.concat([corpus.select("puzzle"), bad]).with_row_index("id", offset=1000)
    corpus.with_columns(pl.col("id").cast(pl.String)).write_csv(folder / "corpus.csv")
    paths = {}
    for strategy in ("fast", "mrv"):
        paths[strategy] = folder / f"{strategy}.parquet"
        solve_file(
            folder / "corpus.csv", paths[strategy], strategy=strategy, workers=1, progress=False
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


def test_every_printed_figure_equals_polars(results):
    path = results["fast"]
    run = cli("report", path)
    assert run.exit_code == 0, run.output
    text = run.stdout
    df = pl.read_parquet(path).with_columns(pl.col("verdict").cast(pl.String))
    meta = json.loads(pq.read_schema(path).metadata[b"sudoku_pipeline"])
    done = searched(df)

    assert f"rows: {count(df.height)} from " in text
    rate, wall = decimal(meta["rows_per_s"], 0), decimal(meta["wall_s"], 2)
    assert f"throughput: {rate} rows/s, wall {wall} s on 1 worker (solve " in text
    assert "options: strategy fast, solutions 2, max_nodes none" in text

    verdict_line = next(line for line in text.splitlines() if line.startswith("verdicts:"))
    printed = {
        v: (n, pct) for v, n, pct in re.findall(r"(\w+) ([\d,]+) \(([\d.]+)%\)", verdict_line)
    }
    counts = dict(df.group_by("verdict").len().rows())
    assert printed == {v: (count(n), decimal(100 * n / df.height)) for v, n in counts.items()}
    assert set(counts) == {"solved", "multiple", "invalid", "malformed", "unsolvable"}

    no_guess = done.filter((pl.col("verdict") == "solved") & (pl.col("guesses") == 0)).height
    kernel_s = done["solve_ns"].sum() / 1e9
    assert (
        f"searched: {count(done.height)} rows; solved without guessing: {count(no_guess)} "
        f"({decimal(100 * no_guess / done.height)}%); kernel time {decimal(kernel_s, 3)} s, "
        f"{decimal(done.height / kernel_s, 0)} puzzles/s per core"
    ) in text

    expected = []
    for title, column, scale, fmt in (
        ("time us", "solve_ns", 1000, decimal),
        ("nodes", "nodes", 1, count),
        ("guesses", "guesses", 1, count),
    ):
        s = done[column]
        expected.append(
            [
                title,
                *(fmt(q(s, p) / scale) for p in (0.5, 0.9, 0.99)),
                fmt(s.max() / scale),
                decimal(s.mean() / scale),
            ]
        )
    assert section(text, "percentiles over searched rows:")[1:] == expected

    by_clues = []
    for clues in sorted(done["clues"].unique().to_list()):
        g = done.filter(pl.col("clues") == clues)
        no_guess_pct = (
            100
            * g.filter((pl.col("verdict") == "solved") & (pl.col("guesses") == 0)).height
            / g.height
        )
        by_clues.append(
            [
                str(clues),
                count(g.height),
                decimal(no_guess_pct),
                count(q(g["nodes"], 0.5)),
                count(q(g["nodes"], 0.9)),
                decimal(q(g["solve_ns"], 0.5) / 1000),
                decimal(q(g["solve_ns"], 0.9) / 1000),
            ]
        )
    assert section(text, "by clue count:")[1:] == by_clues
    assert len(by_clues) > 3

    def hardest(by):
        top = done.sort([*by, "row"], descending=[True] * len(by) + [False]).head(10)
        return [
            [
                str(r["row"]),
                r["id"],
                str(r["clues"]),
                r["verdict"],
                count(r["nodes"]),
                count(r["guesses"]),
                decimal(r["solve_ns"] / 1000),
            ]
            for r in top.iter_rows(named=True)
        ]

    assert section(text, "hardest 10 by nodes:")[1:] == hardest(["nodes", "solve_ns"])
    assert section(text, "hardest 10 by time:")[1:] == hardest(["solve_ns"])


def test_json_holds_the_numbers_alone(results):
    run = cli("report", results["fast"], "--json")
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    (figures,) = data["runs"]
    df = pl.read_parquet(results["fast"])
    done = searched(df)
    assert figures["rows"] == df.height
    assert figures["stats"]["nodes"]["p99"] == q(done["nodes"], 0.99)
    assert figures["stats"]["time_us"]["max"] == done["solve_ns"].max() / 1000
    assert figures["metadata"]["strategy"] == "fast"
    assert data["comparisons"] == []


def test_two_files_compare_per_puzzle_joined_on_row(results, tmp_path):
    """The second file is shuffled and lacks some rows: the ratios come from the join on row,
    not from the position in the file."""
    mrv = pq.read_table(results["mrv"])
    shuffled = pl.from_arrow(mrv).sample(fraction=1.0, shuffle=True, seed=1).tail(-10)
    moved = tmp_path / "mrv.parquet"
    pq.write_table(shuffled.to_arrow().replace_schema_metadata(mrv.schema.metadata), moved)

    run = cli("report", results["fast"], moved)
    assert run.exit_code == 0, run.output
    text = run.stdout
    side = section(text, "== side by side (time in us over searched rows; kernel/s per core) ==")
    assert [r[0] for r in side[1:]] == ["corpus / fast", "corpus / mrv"]

    base = searched(pl.read_parquet(results["fast"]))
    other = searched(shuffled.with_columns(pl.col("verdict").cast(pl.String)))
    joined = base.join(other, on="row", suffix="_mrv")
    assert joined["puzzle"].to_list() == joined["puzzle_mrv"].to_list()
    nodes = joined["nodes_mrv"] / joined["nodes"]
    time = joined["solve_ns_mrv"] / joined["solve_ns"]
    expected = [
        "corpus / mrv",
        "corpus / fast",
        count(joined.height),
        ratio(q(nodes, 0.5)),
        ratio(math.exp(nodes.log().mean())),
        ratio(q(nodes, 0.9)),
        decimal(100 * (nodes < 1).mean()),
        ratio(q(time, 0.5)),
        ratio(math.exp(time.log().mean())),
        ratio(q(time, 0.9)),
        decimal(100 * (time < 1).mean()),
    ]
    rows = section(
        text, "== per puzzle, joined on row: run / baseline (< 1: less than the baseline) =="
    )
    assert rows[1] == expected
    assert "note: 10 rows are in only one of corpus / mrv and corpus / fast" in text
    assert q(nodes, 0.5) > 1  # mrv searches more than fast on these puzzles


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
    assert (
        run.exit_code == 2
        and run.stderr.startswith("error: ")
        and "no such directory" in (run.stderr)
    )
    with pytest.raises(ReportError, match="no such file"):
        report(tmp_path / "missing.parquet")


def test_an_empty_result_file_reports_no_rows(tmp_path):
    path = tmp_path / "empty.parquet"
    pq.write_table(empty_results(), path)
    rep = report(path, html=tmp_path / "empty.html")
    assert "verdicts: no rows" in render_text(rep)
    assert rep.to_dict()["runs"][0]["stats"]["nodes"]["p50"] is None
    assert (tmp_path / "empty.html").stat().st_size > 1000


# --- the HTML report in a real browser ---------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
BROWSER_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run")  # fmt: skip


def _browser_or_skip() -> None:
    """Skip with the reason when no headless Chromium can be had here; in CI (CI=true), fail."""
    reason = None
    try:
        import selenium  # noqa: F401
    except ImportError:
        reason = "selenium is not installed (pip install -e '.[test]')"
    if reason is None and not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        reason = "no chromium (Debian: apt-get install chromium chromium-driver)"
    if reason is None and not Path(CHROMEDRIVER).exists():
        reason = f"no {CHROMEDRIVER} (Debian: apt-get install chromium-driver)"
    if reason is not None:
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"CI must run the browser test: {reason}")
        pytest.skip(reason)


def _open_browser(profile: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    for arg in BROWSER_ARGS + (f"--user-data-dir={profile}", "--window-size=1280,900"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


IMAGES_JS = """return Array.from(document.images).map(img => {
  const box = img.getBoundingClientRect(), style = getComputedStyle(img);
  return {alt: img.alt, complete: img.complete, natural: img.naturalWidth,
          width: box.width, height: box.height,
          shown: style.display !== 'none' && style.visibility !== 'hidden'};
});"""


def test_html_report_in_headless_chromium(results, monkeypatch):
    _browser_or_skip()
    monkeypatch.setenv("SE_OFFLINE", "true")  # selenium must never try to download a driver
    ARTIFACTS.mkdir(exist_ok=True)
    page = ARTIFACTS / "report.html"
    rep = report([results["fast"], results["mrv"]], html=page)
    source = page.read_text()
    assert "http://" not in source and "https://" not in source  # nothing to fetch
    with tempfile.TemporaryDirectory() as profile:
        driver = _open_browser(profile)
        try:
            driver.get(page.resolve().as_uri())
            assert driver.execute_script("return document.readyState") == "complete"
            assert driver.title == "Sudoku solver report"
            images = driver.execute_script(IMAGES_JS)
            fetched = driver.execute_script(
                "return performance.getEntriesByType('resource').map(e => e.name)"
            )
            errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            height = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(1280, min(height + 40, 16_000))
            shot = ARTIFACTS / "report.png"
            assert driver.save_screenshot(str(shot))
            driver.execute_script("console.error('probe')")  # the log check does see errors
            assert any("probe" in e["message"] for e in driver.get_log("browser"))
        finally:
            driver.quit()
    print(f"\nscreenshot of the HTML report: {shot}")
    assert errors == []
    assert fetched == []
    # histogram, CDF, clue counts, and one scatter for the one comparison
    assert len(images) == 3 + len(rep.comparisons) == 4
    for image in images:
        assert image["complete"] and image["natural"] > 0, image["alt"]
        assert image["shown"] and image["width"] > 0 and image["height"] > 0, image["alt"]
    assert shot.stat().st_size > 50_000
