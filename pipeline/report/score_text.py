"""The score runs' tables as formatted cells, and their part of the terminal summary, from
`ScoreReport.to_dict()` (the `text` module's helpers: the same rounding, the same alignment).
Accuracies print as percentages with one decimal."""

from typing import Any

from pipeline.report.text import NONE, Column, Table, align, count, decimal, table

GROUPS = (
    ("by_clues", "clues", "clue count"),
    ("by_grade", "grade", "grade"),
    ("by_difficulty", "difficulty", "difficulty"),
)
SCORE_KEY_SENTENCE = {
    "puzzle": "puzzle (a puzzle repeated in a file counts once, at its first row)",
    "id": "id (the files have no puzzle column; an id repeated counts once)",
    "row": "row (the files have no puzzle or id column: the same input is assumed)",
}


def pct(share: float | None) -> str:
    """`0.6667` -> `66.7`."""
    return NONE if share is None else decimal(100 * share)


def group_table(run: dict[str, Any], key: str, title: str) -> Table:
    """Per group (`key`: by_clues, by_grade, by_difficulty): rows, correct, accuracy and cell
    accuracy."""
    columns: list[Column] = [
        (title, title, str),
        ("rows", "rows", count),
        ("correct", "correct", count),
        ("% accuracy", "accuracy", pct),
        ("% cells", "cell_accuracy", pct),
    ]
    return table(columns, run[key])


def scores_table(data: dict[str, Any]) -> Table:
    """One row per score run: accuracy, cell accuracy and rows per verdict."""
    verdicts = list(data["runs"][0]["verdicts"]) if data["runs"] else []
    columns: list[Column] = [
        ("run", "label", str),
        ("rows", "rows", count),
        ("% accuracy", "accuracy", pct),
        ("% cells", "cell_accuracy", pct),
    ]
    columns += [(v, lambda r, v=v: r["verdicts"].get(v, 0), count) for v in verdicts]
    return table(columns, data["runs"])


def agreement_table(data: dict[str, Any]) -> Table:
    """Each run against the first, row by row: correct in both, in one only, in neither."""
    columns: list[Column] = [
        ("run", "run", str),
        ("baseline", "baseline", str),
        ("rows in both", "common", count),
        ("both correct", "both_correct", count),
        ("only run", "only_run", count),
        ("only baseline", "only_baseline", count),
        ("neither", "neither", count),
    ]
    return table(columns, data["agreements"])


def agreement_notes(data: dict[str, Any]) -> list[str]:
    return [
        f"{a['run']} and {a['baseline']}: joined by {SCORE_KEY_SENTENCE[a['key']]}"
        for a in data["agreements"]
    ]


def accuracy_line(run: dict[str, Any]) -> str:
    cells = run["cell_accuracy"]
    return (
        f"accuracy: {pct(run['accuracy'])}% ({count(run['correct'])} of "
        f"{count(run['rows'])} correct); cell accuracy "
        f"{NONE if cells is None else pct(cells) + '%'}"
    )


def _run_lines(run: dict[str, Any]) -> list[str]:
    meta = run["metadata"]
    lines = [f"== {run['label']}  ({run['path']}) ==", accuracy_line(run)]
    source = f" from {meta['input']}" if meta.get("input") else ""
    column = meta.get("prediction_column")
    lines.append(
        f"scored: {count(run['rows'])} predictions{source}"
        + (f", column {column}" if column else "")
    )
    total = run["rows"]
    shown = [
        f"{v} {count(n)} ({decimal(100 * n / total if total else None)}%)"
        for v, n in run["verdicts"].items()
        if n
    ]
    lines.append(f"verdicts: {'  '.join(shown) or 'no rows'}")
    for key, title, what in GROUPS:
        if run[key]:
            lines += ["", f"accuracy by {what}:", *align(group_table(run, key, title))]
    return lines + [f"note: {note}" for note in run["notes"]]


SCORES_SIDE_BY_SIDE = "== scores side by side (% of rows; cells: of the known cells) =="
AGREEMENT = "== scores row by row: which run is correct =="


def score_lines(data: dict[str, Any]) -> list[str]:
    """The score runs' part of the terminal summary: each run, then side by side, then row
    by row against the first."""
    lines: list[str] = []
    for run in data["runs"]:
        lines += [*_run_lines(run), ""]
    if len(data["runs"]) > 1:
        lines += [SCORES_SIDE_BY_SIDE, *align(scores_table(data)), ""]
    if data["agreements"]:
        lines += [AGREEMENT, *align(agreement_table(data), left=2)]
        lines += [f"  {note}" for note in agreement_notes(data)] + [""]
    return lines
