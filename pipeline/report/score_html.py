"""The score runs on the HTML page: a card per run (accuracy, cell accuracy, verdicts), the
runs side by side and row by row, the plots of accuracy by clue count, grade and difficulty,
and the tables behind them. A page of score files alone is made here (`score_page`); beside
solver runs, the section goes before the page's footer (`with_scores`).

Every sentence that states a fact about the data is computed from it."""

import datetime
from typing import Any

from pipeline.errors import printable
from pipeline.io.runinfo import package_version
from pipeline.report.html import CSS, _e, _figure, _table
from pipeline.report.plots import to_png
from pipeline.report.score_plots import (
    SCORE_VERDICT_COLORS,
    accuracy_by_group,
    score_colors,
    verdict_bars,
)
from pipeline.report.score_text import (
    GROUPS,
    KEY_SENTENCE,
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
    tiles = [(f"{pct(run['accuracy'])}%", "accuracy"),
             (NONE if cells is None else f"{pct(cells)}%", "cell accuracy"),
             (count(run["correct"]), "correct"), (count(run["rows"]), "rows")]  # fmt: skip
    tile_html = "".join(f'<div class="tile"><b>{_e(v)}</b><span>{_e(t)}</span></div>'
                        for v, t in tiles)  # fmt: skip
    chips = "".join(
        f'<span class="chip" style="--c:{SCORE_VERDICT_COLORS.get(v, "#999")}"><i></i>{_e(v)} '
        f"{count(n)}</span>"
        for v, n in run["verdicts"].items() if n
    )  # fmt: skip
    meta = run["metadata"]
    source = ", ".join(f"{k} {meta[k]}" for k in ("input", "prediction_column") if meta.get(k))
    return (
        f'<div class="card" style="--c:{color}"><h3>{_e(run["label"])}</h3>'
        f'<div class="path">{_e(run["path"])}</div>'
        f'<div class="tiles">{tile_html}</div><div class="chips">{chips}</div>'
        f'<div class="note" style="margin-top:8px">{_e(source)}</div>'
        + "".join(f'<div class="note">note: {_e(n)}</div>' for n in run["notes"])
        + "</div>"
    )


def _group_caption(data: dict[str, Any], key: str, name: str) -> str:
    parts = []
    for run in data["runs"]:
        if run[key]:
            best = max(run[key], key=lambda g: (g["accuracy"] or 0, g["rows"]))
            worst = min(run[key], key=lambda g: (g["accuracy"] or 0, -g["rows"]))
            if best["accuracy"] == worst["accuracy"]:
                parts.append(f"{run['label']}: {pct(best['accuracy'])}% in every group")
                continue
            parts.append(f"{run['label']}: from {pct(worst['accuracy'])}% ({name} "
                         f"{worst[name]}, {count(worst['rows'])} rows) to "
                         f"{pct(best['accuracy'])}% ({name} {best[name]}, "
                         f"{count(best['rows'])} rows)")  # fmt: skip
    return "Share of rows correct per group; " + "; ".join(parts) + "."


def _plots(data: dict[str, Any]) -> str:
    lines = "; ".join(f"{r['label']}: {accuracy_line(r)}" for r in data["runs"])
    figures = [_figure(to_png(verdict_bars(data)), "Predictions by verdict", lines + ".")]
    for key, name, what in GROUPS:
        if any(r[key] for r in data["runs"]):
            title = f"Accuracy by {what.split(' (')[0]}"
            figures.append(_figure(to_png(accuracy_by_group(data, key, name, what)), title,
                                   _group_caption(data, key, name)))  # fmt: skip
    return "<h3>Plots</h3><div class='plots'>" + "".join(figures) + "</div>"


def score_section(data: dict[str, Any]) -> str:
    """The score runs' part of the page, from `ScoreReport.to_dict()`."""
    colors = score_colors(data)
    cards = "".join(_card(r, colors[r["label"]]) for r in data["runs"])
    parts = [f"<h2>Scores: a model's answers</h2><div class='cards'>{cards}</div>"]
    if len(data["runs"]) > 1:
        parts.append("<h3>Side by side</h3>" + _table(scores_table(data)))
    if data["agreements"]:
        notes = "".join(
            f"<p class='note'>{_e(a['run'])} and {_e(a['baseline'])}: joined by "
            f"{_e(KEY_SENTENCE[a['key']])}.</p>" for a in data["agreements"]
        )  # fmt: skip
        parts.append("<h3>Row by row: which run is correct</h3>"
                     + _table(agreement_table(data), left=2) + notes)  # fmt: skip
    parts.append(_plots(data))
    details = "".join(
        "<div>" + "".join(f"<h3>{_e(run['label'])}: accuracy by {_e(what)}</h3>"
                          + _table(group_table(run, key, name))
                          for key, name, what in GROUPS if run[key]) + "</div>"
        for run in data["runs"]
    )  # fmt: skip
    parts.append(f"<div class='details'>{details}</div><p class='note'>{_e(FOOTER)}</p>")
    return f"{SCORE_CSS}<section class='scores'>{''.join(parts)}</section>"


def with_scores(page: str, data: dict[str, Any]) -> str:
    """A solver runs' page with the score section before its footer."""
    head, footer, tail = page.rpartition("<footer>")
    return head + score_section(data) + footer + tail if footer else page


def score_page(data: dict[str, Any]) -> str:
    """A whole page of score runs alone."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    files = ", ".join(sorted({printable(r["path"]) for r in data["runs"]}))
    n = len(data["runs"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Sudoku score report</title><style>{CSS}</style></head>
<body><main>
<h1>Sudoku score report</h1>
<p class="sub">{n} score run{"s" if n != 1 else ""} from {_e(files)} · made {stamp} by
sudoku-pipeline {_e(package_version())}</p>
{score_section(data)}
</main></body></html>
"""
