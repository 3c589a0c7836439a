"""The HTML report with one to four runs: every text matplotlib draws stays inside its image
and clear of every other (checked as drawn, not guessed); captions computed from the data; the
hardest puzzles copyable; the page in a real headless Chromium (no console errors, nothing
fetched, every plot decoded and visible, no sideways scrolling), with screenshots of the page
and of each plot kept in artifacts/ for a person to look at."""

import html
import os
import re
import shutil
import tempfile
from pathlib import Path

import polars as pl
import pytest

import pipeline
from pipeline.jobs.solve.job import solve_file
from pipeline.report import report
from pipeline.report.html import render_html
from pipeline.report.text import decimal

plots = pytest.importorskip("pipeline.report.plots")  # the `report` extra: matplotlib
figures = pytest.importorskip("pipeline.report.figures")

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
# the runs of each report: 1 to 4 files; the 2-run case is two runs of one strategy whose
# long file names become the runs' labels (the case where axis labels used to be cut off)
CASES = {
    1: ["fast"],
    2: ["forum_hardest_fast_before_the_change", "forum_hardest_fast_after_the_change"],
    3: ["fast", "mrv", "easy"],
    4: ["fast", "mrv", "backtrack", "easy"],
}


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    """Result files of two corpora with long names: minimal and 30-clue puzzles, plus an
    empty and a clashing puzzle, solved by three strategies and by `fast` twice more; and
    32-clue puzzles solved by `fast`."""
    folder = tmp_path_factory.mktemp("gallery")
    hard = pl.concat([pipeline.generate(150, seed=7), pipeline.generate(40, seed=8, clues=30)])
    hard = pl.concat([hard.select("puzzle"), pl.DataFrame({"puzzle": ["." * 81, "11" + "." * 79]})])
    hard.write_csv(folder / "puzzles5_forum_hardest_like.csv")
    pipeline.generate(200, seed=9, clues=32).write_csv(folder / "kaggle_first_rows_like.csv")
    runs = {"fast": "fast", "mrv": "mrv", "backtrack": "backtrack",
            "forum_hardest_fast_before_the_change": "fast",
            "forum_hardest_fast_after_the_change": "fast"}  # fmt: skip
    paths = {}
    for name, strategy in runs.items():
        paths[name] = folder / f"{name}.parquet"
        solve_file(folder / "puzzles5_forum_hardest_like.csv", paths[name], strategy=strategy,
                   workers=1, progress=False, max_nodes=20_000)  # fmt: skip
    paths["easy"] = folder / "easy.parquet"
    solve_file(folder / "kaggle_first_rows_like.csv", paths["easy"], workers=1, progress=False)
    return {n: report([paths[name] for name in names]) for n, names in CASES.items()}


def all_plots(rep):
    colors = plots.run_colors(rep.corpora)
    figures = {
        "nodes": plots.nodes_histograms(rep.runs),
        "time": plots.time_cdf(rep.corpora, colors),
        "clues": plots.clue_effort(rep.corpora, colors),
    }
    for i, pair in enumerate(rep.pairs):
        figures[f"scatter{i}"] = plots.pair_scatter(pair, rep.corpus_of(pair.run), colors)
    return figures


def drawn_texts(fig, monkeypatch) -> tuple[list[tuple[str, object]], tuple[int, int]]:
    """Every non-empty text matplotlib draws when the figure is saved as the report saves
    it, with its box in pixels (where it was drawn last: constrained layout draws twice), and
    the image's size."""
    from matplotlib.text import Text

    seen, size = {}, []
    original = Text.draw

    def draw(self, renderer):
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():
            seen[id(self)] = (self.get_text(), self.get_window_extent(renderer))
            size[:] = [renderer.width, renderer.height]

    monkeypatch.setattr(Text, "draw", draw)
    figures.to_png(fig)
    monkeypatch.undo()
    return list(seen.values()), (size[0], size[1])


@pytest.mark.parametrize("runs", list(CASES))
def test_plot_texts_neither_overlap_nor_leave_the_image(gallery, runs, monkeypatch):
    rep = gallery[runs]
    for name, fig in all_plots(rep).items():
        texts, (width, height) = drawn_texts(fig, monkeypatch)
        assert len(texts) > 8, name
        for text, box in texts:
            inside = box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1
            assert inside, f"{name}: {text!r} leaves the {width}x{height} image: {box}"
        for i, (a, box_a) in enumerate(texts):
            for b, box_b in texts[i + 1 :]:
                overlap_x = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
                overlap_y = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
                assert overlap_x <= 1 or overlap_y <= 1, f"{name}: {a!r} overlaps {b!r}"


def figcaptions(page: str) -> dict[str, str]:
    """Each figure's caption by its title."""
    found = re.findall(r"<figure[^>]*><h3>(.*?)</h3>.*?<figcaption>(.*?)</figcaption>", page, re.S)
    return {html.unescape(t): html.unescape(c) for t, c in found}


def test_captions_are_computed_from_the_data(gallery):
    rep = gallery[3]
    captions = figcaptions(render_html(rep))
    frames = {r.label: r.frame.filter(~pl.col("verdict").is_in(["invalid", "malformed"]))
              for r in rep.runs}  # fmt: skip
    shares = []
    for label, done in frames.items():
        one = done.filter(pl.col("nodes") == 1).height
        shares.append(f"{label} {decimal(100 * one / done.height)}% ({one} of {done.height})")
    assert captions["Search effort by verdict"].endswith(
        "Puzzles solved at the root, one node, by propagation alone: " + "; ".join(shares) + "."
    )
    medians = []
    for label, done in frames.items():
        p50_ns = int(done["solve_ns"].quantile(0.5, interpolation="nearest"))
        medians.append(f"{label} {decimal(p50_ns / 1000)} µs")
    assert captions["Solve time, cumulative"].endswith(
        "Median kernel time: " + "; ".join(medians) + "."
    )
    hard = frames["puzzles5_forum_hardest_like / fast"]
    clues = hard.filter(pl.col("clues") >= 17)["clues"]
    assert (
        f"puzzles5_forum_hardest_like: {clues.n_unique()} clue counts from {clues.min()} to "
        f"{clues.max()}"
    ) in captions["Effort by clue count"]
    assert (
        f"{hard.filter(pl.col('clues') < 17).height} left out with fewer than 17 givens"
        in (captions["Effort by clue count"])
    )
    mrv = frames["puzzles5_forum_hardest_like / mrv"]
    both = hard.join(mrv, on="puzzle", suffix="_mrv")
    faster = decimal(100 * (both["solve_ns_mrv"] < both["solve_ns"]).sum() / both.height)
    scatter = captions["puzzles5_forum_hardest_like: mrv against fast"]
    assert scatter.startswith(f"Each dot is one of the {both.height:,} puzzles searched by both")
    assert scatter.endswith(f"and less time for {faster}%.")
    assert "Most puzzles need one node" not in " ".join(captions.values())


def test_the_hardest_puzzles_are_shown_whole_to_copy(gallery):
    rep = gallery[1]
    page = render_html(rep)
    run = rep.to_dict()["runs"][0]
    for hardest in run["hardest_by_nodes"] + run["hardest_by_time"]:
        assert len(hardest["puzzle"]) == 81
        assert (
            f'<code class="pz" title="click to select, then copy">{hardest["puzzle"]}</code>'
            in (page)
        )
    assert "user-select:all" in page


def test_names_cut_for_the_plots_are_given_whole_in_the_captions(gallery):
    captions = figcaptions(render_html(gallery[2]))
    assert "puzzles5_forum_hardest_like: after against before" in captions
    assert captions["Solve time, cumulative"].endswith(
        "In the plots: before = forum_hardest_fast_before_the_change / fast; after = "
        "forum_hardest_fast_after_the_change / fast."
    )


# --- the page in a real browser ----------------------------------------------------------------

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


@pytest.fixture(scope="module")
def browser():
    _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # selenium must never try to download a driver
    options = Options()
    options.binary_location = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    with tempfile.TemporaryDirectory() as profile:
        for arg in BROWSER_ARGS + (f"--user-data-dir={profile}", "--window-size=1280,900"):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        try:
            yield driver
        finally:
            driver.quit()


IMAGES_JS = """return Array.from(document.images).map(img => {
  const box = img.getBoundingClientRect(), style = getComputedStyle(img);
  return {alt: img.alt, complete: img.complete, natural: img.naturalWidth,
          width: box.width, height: box.height,
          shown: style.display !== 'none' && style.visibility !== 'hidden'};
});"""


@pytest.mark.parametrize("runs", list(CASES))
def test_html_report_in_headless_chromium(gallery, runs, browser):
    from selenium.webdriver.common.by import By

    rep = gallery[runs]
    folder = ARTIFACTS / f"report-{runs}-runs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    page = folder / "report.html"
    page.write_text(render_html(rep), encoding="utf-8")
    source = page.read_text()
    assert "http://" not in source and "https://" not in source  # nothing to fetch

    browser.set_window_size(1280, 900)
    browser.get_log("browser")  # drop what earlier pages logged
    browser.get(page.resolve().as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    assert browser.title == "Sudoku solver report"
    images = browser.execute_script(IMAGES_JS)
    fetched = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    sideways = browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    puzzle = browser.find_element(By.CSS_SELECTOR, "code.pz")
    select = browser.execute_script("return getComputedStyle(arguments[0]).userSelect", puzzle)
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1280, min(height + 40, 16_000))  # all of it in view: no clipping
    shot = folder / "page.png"
    assert browser.save_screenshot(str(shot))
    for i, figure in enumerate(browser.find_elements(By.TAG_NAME, "figure")):
        figure.screenshot(str(folder / f"plot-{i}.png"))
    print(f"\nscreenshots of the {runs}-run report: {folder}")

    assert errors == []
    assert fetched == []
    assert sideways <= 0, f"the page scrolls sideways by {sideways}px"
    assert select == "all" and len(puzzle.text) == 81
    # histogram, CDF, clue counts, and one scatter per comparison
    assert len(images) == 3 + len(rep.pairs)
    for image in images:
        assert image["complete"] and image["natural"] > 0, image["alt"]
        assert image["shown"] and image["width"] > 0 and image["height"] > 0, image["alt"]
    assert shot.stat().st_size > 50_000
    assert len(list(folder.glob("plot-*.png"))) == len(images)


def test_the_console_check_sees_errors(browser, tmp_path):
    """The console check above can fail: an error logged by a page is seen."""
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><title>page</title><p>a page")
    browser.get(page.as_uri())
    browser.get_log("browser")
    browser.execute_script("console.error('probe')")
    assert any("probe" in e["message"] for e in browser.get_log("browser"))
