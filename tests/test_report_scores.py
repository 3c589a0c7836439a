"""`report` on `score` outputs: a score file told by its metadata, its figures equal to what
`score` printed and to polars over its rows, two models side by side and row by row, in text,
`--json` and HTML (with plots of accuracy by clue count, grade and difficulty)."""

import json
import re

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.jobs.score import score_file
from pipeline.jobs.score.verdicts import VERDICT_NAMES
from pipeline.rating.bins import NO_BIN, bin_label, difficulty_bins
from pipeline.report import report
from pipeline.report.scores import SCORE_VERDICTS, is_score_file
from tests.conftest import cli

CORPUS = pipeline.generate(40, seed=251)
GRADES = ["naked_single", "hidden_single", "naked_single", "x_wing"]  # not in ladder order


def _answers(folder):
    """A CSV of 40 puzzles with two models' answers: `perfect` all correct; `half` leaves
    every other puzzle as given (incomplete) and drops one answer (malformed)."""
    half = pl.when(pl.int_range(pl.len()) % 2 == 0).then("solution").otherwise("puzzle")
    frame = CORPUS.with_columns(
        perfect=pl.col("solution"),
        half=pl.when(pl.int_range(pl.len()) == 5).then(None).otherwise(half),
        grade=pl.Series(GRADES * 10),
    ).drop("solution")
    path = folder / "answers.csv"
    frame.write_csv(path)
    return path


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scores")
    source = _answers(folder)
    out = {}
    for model in ("perfect", "half"):
        out[model] = folder / f"{model}.scored.parquet"
        out[model + "_summary"] = score_file(source, out[model], prediction_column=model,
                                             workers=1, progress=False)  # fmt: skip
    return out


def test_the_report_knows_the_score_verdicts():
    assert SCORE_VERDICTS == VERDICT_NAMES


def test_a_score_file_is_told_by_its_metadata_and_its_figures_are_scores(scored, tmp_path):
    assert is_score_file(scored["half"])
    assert not is_score_file(tmp_path / "missing.parquet")
    data = report(scored["half"]).to_dict()
    assert data["runs"] == []
    run = data["scores"]["runs"][0]
    summary = scored["half_summary"]
    assert run["label"] == "answers / half"
    for key in ("rows", "correct", "accuracy", "cell_accuracy", "verdicts"):
        assert run[key] == pytest.approx(getattr(summary, key)), key
    assert {g["clues"]: g["accuracy"] for g in run["by_clues"]} == pytest.approx(
        {c: g["accuracy"] for c, g in summary.by_clues.items()}
    )
    # the grades in ladder order, each figure as polars computes it over the rows
    rows = pl.read_parquet(scored["half"]).with_columns(ok=pl.col("verdict") == "correct")
    assert [g["grade"] for g in run["by_grade"]] == ["hidden_single", "naked_single", "x_wing"]
    for g in run["by_grade"]:
        group = rows.filter(pl.col("grade") == g["grade"])
        assert (g["rows"], g["correct"]) == (group.height, group["ok"].sum())
        cells = group["cells_correct"]
        assert g["cell_accuracy"] == pytest.approx(cells.sum() / (81 * cells.count()))
    assert run["by_difficulty"] == []


def test_two_models_side_by_side_and_row_by_row(scored):
    done = cli("report", scored["perfect"], scored["half"])
    assert done.exit_code == 0, done.output
    text = done.stdout
    assert "accuracy: 100.0% (40 of 40 correct); cell accuracy 100.0%" in text
    assert "accuracy: 50.0% (20 of 40 correct)" in text
    assert "verdicts: correct 20 (50.0%)  incomplete 19 (47.5%)  malformed 1 (2.5%)" in text
    assert "accuracy by clue count:" in text and "accuracy by grade:" in text
    side = re.search(r"answers / half +40 +50\.0 +\S+ +20 +0 +0 +19 +1", text)
    assert side, text
    assert re.search(r"answers / half +answers / perfect +40 +20 +0 +20 +0", text), text
    assert "joined by puzzle" in text

    data = json.loads(cli("report", scored["perfect"], scored["half"], "--json").stdout)
    (agree,) = data["scores"]["agreements"]
    assert agree | {"run": None} == {"run": None, "baseline": "answers / perfect", "key": "puzzle",
                                     "common": 40, "both_correct": 20, "only_run": 0,
                                     "only_baseline": 20, "neither": 0}  # fmt: skip


def test_score_files_beside_solve_files(scored, tmp_path):
    solved = tmp_path / "solved.parquet"
    pipeline.solve_file(scored["perfect"].parent / "answers.csv", solved, workers=1,
                        progress=False)  # fmt: skip
    data = report([solved, scored["half"]]).to_dict()
    assert [r["label"] for r in data["runs"]] == ["answers / fast"]
    assert [r["label"] for r in data["scores"]["runs"]] == ["answers / half"]
    text = cli("report", solved, scored["half"]).stdout
    assert text.index("== answers / fast") < text.index("== answers / half")


def test_a_rated_scoring_reports_what_score_summed(tmp_path):
    """`score --rate`: the report's groups by grade and difficulty are the summary's, and
    the page plots them."""
    source, out = tmp_path / "plain.csv", tmp_path / "rated.parquet"
    wrong = pl.when(pl.int_range(pl.len()) % 3 == 0).then("puzzle").otherwise("solution")
    CORPUS.select("id", "puzzle", prediction=wrong).write_csv(source)
    summary = score_file(source, out, rate=True, rate_samples=4, workers=1, progress=False,
                         batch_size=16)  # fmt: skip
    run = report(out).to_dict()["scores"]["runs"][0]
    for key, name in (("by_grade", "grade"), ("by_difficulty", "difficulty")):
        mine = {g[name]: (g["rows"], g["correct"]) for g in run[key]}
        assert len(mine) >= 2, key
        assert mine == {k: (g["rows"], g["correct"]) for k, g in getattr(summary, key).items()}
    pytest.importorskip("matplotlib")
    page = tmp_path / "rated.html"
    assert cli("report", out, "--html", page).exit_code == 0
    text = page.read_text()
    assert "<h3>Accuracy by difficulty</h3>" in text and "<h3>Accuracy by grade</h3>" in text


def test_a_score_file_with_difficulty_is_binned(tmp_path):
    """A score file without metadata (written elsewhere) is told by its columns."""
    path = tmp_path / "rated.parquet"
    pl.DataFrame({
        "row": [0, 1, 2, 3, 4], "verdict": ["correct", "wrong", "correct", "correct", "wrong"],
        "cells_correct": [81, 79, 81, 81, None], "clues": [30, 30, 25, 25, 25],
        "difficulty": [0.0, 0.0, 0.5, 3.0, None],
    }).write_parquet(path)  # fmt: skip
    run = report(path).to_dict()["scores"]["runs"][0]
    assert run["by_difficulty"] == [
        {"difficulty": "0", "rows": 2, "correct": 1, "accuracy": 0.5,
         "cell_accuracy": pytest.approx(160 / 162)},
        {"difficulty": "0-1", "rows": 1, "correct": 1, "accuracy": 1.0, "cell_accuracy": 1.0},
        {"difficulty": "2-4", "rows": 1, "correct": 1, "accuracy": 1.0, "cell_accuracy": 1.0},
    ]  # fmt: skip
    assert run["cell_accuracy"] == pytest.approx((81 * 3 + 79) / (81 * 4))


def test_difficulty_bins_are_zero_then_doubling():
    values = [0.0, 0.25, 1.0, 1.5, 4.0, 4.01, 100.0, float("nan"), -1.0, float("inf")]
    codes = difficulty_bins(np.array(values))
    assert codes.tolist() == [0, 1, 1, 2, 3, 4, 8, NO_BIN, NO_BIN, NO_BIN]
    assert [bin_label(c) for c in codes[:7]] == ["0", "0-1", "0-1", "1-2", "2-4", "4-8", "64-128"]


def test_the_html_page_shows_the_scores_with_plots(scored, tmp_path):
    pytest.importorskip("matplotlib")
    page = tmp_path / "scores.html"
    done = cli("report", scored["perfect"], scored["half"], "--html", page)
    assert done.exit_code == 0, done.output
    text = page.read_text()
    assert "<h1>Sudoku score report</h1>" in text
    for title in ("Predictions by verdict", "Accuracy by clue count", "Accuracy by grade"):
        assert f"<h3>{title}</h3>" in text
    assert text.count("data:image/png;base64,") == 3
    assert "answers / half: from 0.0% (grade" in text  # the caption, from the data
    assert "Row by row: which run is correct" in text

    solved = tmp_path / "solved.parquet"
    pipeline.solve_file(scored["perfect"].parent / "answers.csv", solved, workers=1,
                        progress=False)  # fmt: skip
    mixed = tmp_path / "mixed.html"
    assert cli("report", solved, scored["half"], "--html", mixed).exit_code == 0
    text = mixed.read_text()
    assert "<h1>Sudoku solver report</h1>" in text
    assert text.index("Scores: a model") < text.index("<footer>")


@pytest.fixture(scope="module")
def three_models(scored, tmp_path_factory):
    """Three score runs with long labels, graded and rated: what the page must lay out."""
    folder = tmp_path_factory.mktemp("three")
    source = folder / "a_rather_long_name_for_a_file_of_answers_from_a_neural_model.csv"
    wrong = pl.when(pl.int_range(pl.len()) % 3 == 0).then("puzzle").otherwise("solution")
    CORPUS.select("id", "puzzle", prediction_of_the_transformer_model=wrong,
                  recurrent_model_predictions=pl.col("solution")).write_csv(source)  # fmt: skip
    paths = [scored["half"]]
    for column in ("prediction_of_the_transformer_model", "recurrent_model_predictions"):
        paths.append(folder / f"{column}.parquet")
        score_file(source, paths[-1], prediction_column=column, rate=True, rate_samples=2,
                   workers=1, progress=False)  # fmt: skip
    return report(paths)


def test_score_plot_texts_neither_overlap_nor_leave_the_image(three_models, monkeypatch):
    pytest.importorskip("matplotlib")
    from pipeline.report import score_plots
    from tests.test_report_html import drawn_texts

    data = three_models.scores.to_dict()
    figures = {"verdicts": score_plots.verdict_bars(data)}
    for key, name, what in (("by_clues", "clues", "clue count"), ("by_grade", "grade", "grade"),
                            ("by_difficulty", "difficulty", "difficulty")):  # fmt: skip
        figures[key] = score_plots.accuracy_by_group(data, key, name, what)
    for name, fig in figures.items():
        texts, (width, height) = drawn_texts(fig, monkeypatch)
        assert len(texts) > 5, name
        for text, box in texts:
            inside = box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1
            assert inside, f"{name}: {text!r} leaves the {width}x{height} image: {box}"
        for i, (a, box_a) in enumerate(texts):
            for b, box_b in texts[i + 1 :]:
                overlap_x = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
                overlap_y = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
                assert overlap_x <= 1 or overlap_y <= 1, f"{name}: {a!r} overlaps {b!r}"


def test_the_score_page_in_headless_chromium(three_models, tmp_path):
    pytest.importorskip("matplotlib")
    from tests.test_report_html import ARTIFACTS, IMAGES_JS, _browser_or_skip

    _browser_or_skip()
    from pipeline.report import write_html
    from tests.test_report_html import browser as make_browser

    folder = ARTIFACTS / "report-scores"
    folder.mkdir(parents=True, exist_ok=True)
    page = write_html(three_models, folder / "scores.html", force=True)
    assert "http://" not in page.read_text() and "https://" not in page.read_text()
    for driver in make_browser.__wrapped__():
        driver.get(page.resolve().as_uri())
        assert driver.title == "Sudoku score report"
        images = driver.execute_script(IMAGES_JS)
        fetched = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        sideways = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, min(height + 40, 16_000))
        assert driver.save_screenshot(str(folder / "page.png"))
        assert errors == [] and fetched == []
        assert sideways <= 0, f"the page scrolls sideways by {sideways}px"
        assert len(images) == 4  # verdicts; accuracy by clue count, grade, difficulty
        for image in images:
            assert image["complete"] and image["natural"] > 0, image["alt"]
            assert image["shown"] and image["width"] > 0 and image["height"] > 0, image["alt"]


def test_a_damaged_score_file_is_one_error_line(scored, tmp_path):
    """Score metadata on a file without the score columns, or with columns of another type:
    exit 2, one line naming the file; the page is not written."""
    from tests.conftest import assert_one_line_error

    meta = pq.read_schema(scored["half"]).metadata
    no_cells = tmp_path / "no_cells.parquet"
    table = pa.table({"row": [0], "verdict": ["correct"], "clues": [30]})
    pq.write_table(table.replace_schema_metadata(meta), no_cells)
    text_cells = tmp_path / "text_cells.parquet"
    table = pa.table({"row": [0], "verdict": ["correct"], "clues": [30], "cells_correct": ["x"]})
    pq.write_table(table.replace_schema_metadata(meta), text_cells)
    for path, says in ((no_cells, "not a score file (no column cells_correct)"),
                       (text_cells, "not a readable score file")):  # fmt: skip
        done = cli("report", scored["perfect"], path, "--html", tmp_path / "page.html")
        assert done.exit_code == 2, done.output
        assert_one_line_error(done.stderr, str(path), says)
        assert not (tmp_path / "page.html").exists()


def test_two_models_in_their_own_files_are_joined_by_puzzle(tmp_path):
    """Model A's file in corpus order, model B's reversed and without ids: rows are joined by
    puzzle, not by position (by position, 3 rows would be wrong in both, not 2)."""
    a_wrong = pl.int_range(pl.len()) % 4 == 0  # rows 0, 4, ..., 36
    CORPUS.select("id", "puzzle", prediction=pl.when(a_wrong).then("puzzle")
                  .otherwise("solution")).write_csv(tmp_path / "a.csv")  # fmt: skip
    b_wrong = pl.int_range(pl.len()) < 10  # rows 39 .. 30 of the corpus
    CORPUS.reverse().select("puzzle", prediction=pl.when(b_wrong).then("puzzle")
                            .otherwise("solution")).write_csv(tmp_path / "b.csv")  # fmt: skip
    outs = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    for name, out in zip("ab", outs, strict=True):
        score_file(tmp_path / f"{name}.csv", out, workers=1, progress=False)
    (agree,) = report(outs).to_dict()["scores"]["agreements"]
    assert (agree["key"], agree["common"]) == ("puzzle", 40)
    assert (agree["both_correct"], agree["only_run"], agree["only_baseline"], agree["neither"]) \
        == (22, 8, 8, 2)  # fmt: skip

    # score files without a puzzle column (written before it was there): by row, said so
    for out in outs:
        table = pq.read_table(out)
        pq.write_table(table.drop_columns(["puzzle"]), out)
    (by_row,) = report(outs).to_dict()["scores"]["agreements"]
    assert (by_row["key"], by_row["neither"]) == ("row", 3)
    assert "the same input is assumed" in cli("report", *outs).stdout
