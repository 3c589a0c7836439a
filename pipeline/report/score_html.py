"""The score runs on the HTML page: a card per run (accuracy, cell accuracy, verdicts), the
runs side by side and row by row, the plots of accuracy by clue count, grade and difficulty,
and the tables behind them. A page of score files alone is made here (`score_page`); beside
solver runs, the section goes before the page's footer (`with_scores`).

Every sentence that states a fact about the data is computed from it."""

from typing import Any

from pipeline.report.figures import to_png
from pipeline.report.page import card, escape, figure, html_table, page
from pipeline.report.score_plots import (
    SCORE_VERDICT_COLORS,
    accuracy_by_group,
    score_colors,
    verdict_bars,
)
from pipeline.report.score_text import (
    GROUPS,
    SCORE_KEY_SENTENCE,
    accuracy_line,
    agreement_table,
    group_table,
    pct,
    scores_table,
)
from pipeline.report.text import NONE, count

FOOTER = (
    "A prediction is correct when it is a complete grid that keeps the puzzle's givens and "
    "breaks no rule (for a puzzle with several solutions, any of them). Accuracy: the share of "
    "rows correct, malformed rows included; cell accuracy: the cells holding the solution's "
    "digit over 81 times the rows where the solution is known. Difficulty: the file's "
    "difficulty column (with score --rate or solve --rate, mean guesses over random "
    "symmetries), in bins 0, 0-1, 1-2, 2-4, ..."
)


# beside the page's CSS: long run labels wrap rather than widen a table or a card
SCORE_CSS = """<style>
.scores td.l { white-space:normal; overflow-wrap:anywhere; min-width:10em; max-width:26em; }
.scores .card h3, .scores .note, .scores h3 { overflow-wrap:anywhere; }
</style>"""


def _card(run: dict[str, Any], color: str) -> str:
    cells = run["cell_accuracy"]
    tiles = [
        (f"{pct(run['accuracy'])}%", "accuracy"),
        (NONE if cells is None else f"{pct(cells)}%", "cell accuracy"),
        (count(run["correct"]), "correct"),
        (count(run["rows"]), "rows"),
    ]
    meta = run["metadata"]
    source = ", ".join(f"{k} {meta[k]}" for k in ("input", "prediction_column") if meta.get(k))
    return card(run, color, run["path"], tiles, SCORE_VERDICT_COLORS, source)


def _group_caption(data: dict[str, Any], key: str, name: str) -> str:
    parts = []
    for run in data["runs"]:
        if run[key]:
            best = max(run[key], key=lambda g: (g["accuracy"] or 0, g["rows"]))
            worst = min(run[key], key=lambda g: (g["accuracy"] or 0, -g["rows"]))
            if best["accuracy"] == worst["accuracy"]:
                parts.append(f"{run['label']}: {pct(best['accuracy'])}% in every group")
                continue
            parts.append(
                f"{run['label']}: from {pct(worst['accuracy'])}% ({name} "
                f"{worst[name]}, {count(worst['rows'])} rows) to "
                f"{pct(best['accuracy'])}% ({name} {best[name]}, "
                f"{count(best['rows'])} rows)"
            )
    return "Share of rows correct per group; " + "; ".join(parts) + "."


def _plots(data: dict[str, Any]) -> str:
    lines = "; ".join(f"{r['label']}: {accuracy_line(r)}" for r in data["runs"])
    figures = [figure(to_png(verdict_bars(data)), "Predictions by verdict", lines + ".")]
    for key, name, what in GROUPS:
        if any(r[key] for r in data["runs"]):
            title = f"Accuracy by {what.split(' (')[0]}"
            figures.append(
                figure(
                    to_png(accuracy_by_group(data, key, name, what)),
                    title,
                    _group_caption(data, key, name),
                )
            )
    return "<h3>Plots</h3><div class='plots'>" + "".join(figures) + "</div>"


def score_section(data: dict[str, Any]) -> str:
    """The score runs' part of the page, from `ScoreReport.to_dict()`."""
    colors = score_colors(data)
    cards = "".join(_card(r, colors[r["label"]]) for r in data["runs"])
    parts = [f"<h2>Scores: a model's answers</h2><div class='cards'>{cards}</div>"]
    if len(data["runs"]) > 1:
        parts.append("<h3>Side by side</h3>" + html_table(scores_table(data)))
    if data["agreements"]:
        notes = "".join(
            f"<p class='note'>{escape(a['run'])} and {escape(a['baseline'])}: joined by "
            f"{escape(SCORE_KEY_SENTENCE[a['key']])}.</p>"
            for a in data["agreements"]
        )
        parts.append(
            "<h3>Row by row: which run is correct</h3>"
            + html_table(agreement_table(data), left=2)
            + notes
        )
    parts.append(_plots(data))
    details = "".join(
        "<div>"
        + "".join(
            f"<h3>{escape(run['label'])}: accuracy by {escape(what)}</h3>"
            + html_table(group_table(run, key, name))
            for key, name, what in GROUPS
            if run[key]
        )
        + "</div>"
        for run in data["runs"]
    )
    parts.append(f"<div class='details'>{details}</div><p class='note'>{escape(FOOTER)}</p>")
    return f"{SCORE_CSS}<section class='scores'>{''.join(parts)}</section>"


def with_scores(page: str, data: dict[str, Any]) -> str:
    """A solver runs' page with the score section before its footer."""
    head, footer, tail = page.rpartition("<footer>")
    return head + score_section(data) + footer + tail if footer else page


def score_page(data: dict[str, Any]) -> str:
    """A whole page of score runs alone."""
    n = len(data["runs"])
    what = f"{n} score run{'s' if n != 1 else ''}"
    files = [r["path"] for r in data["runs"]]
    return page("Sudoku score report", what, files, score_section(data))
