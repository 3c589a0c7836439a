"""The report's tables as formatted cells, and the terminal summary made of them.

Every table is built once here, as `(headers, rows)` of strings, from `Report.to_dict()`; the
terminal aligns them, the HTML page puts them in `<table>`s. Integers (rows, nodes, guesses)
print with thousands separators; times in microseconds and percentages with one decimal;
ratios with two decimals below 10; each rounded half up from its exact value, by the one
helper of `pipeline.results.measures` (`fixed`).
"""

from collections.abc import Callable, Iterable
from typing import Any

from pipeline.report.compare import SAME_CORPUS
from pipeline.report.model import Report
from pipeline.results.measures import fixed, percent

NONE = "-"
Table = tuple[list[str], list[list[str]]]
QUANTILE_NAMES = ("p50", "p90", "p99", "max")


def count(value: float | None) -> str:
    """`1234` -> `1,234` (integers: rows, nodes, guesses)."""
    return NONE if value is None else fixed(value, 0)


def decimal(value: float | None, places: int = 1) -> str:
    """`1234.56` -> `1,234.6` (times in us, percentages, means)."""
    return NONE if value is None else fixed(value, places)


def ratio(value: float | None) -> str:
    """Two decimals below 10, one below 100, none above: `0.85`, `14.4`, `6,667`."""
    if value is None:
        return NONE
    return fixed(value, 2 if value < 10 else 1 if value < 100 else 0)


# A column of a table: its header, what of an item it shows (a key, or a function of the item)
# and how that is written.
Column = tuple[str, str | Callable[[Any], Any], Callable[[Any], str]]


def table(columns: list[Column], items: Iterable[Any]) -> Table:
    """A table of one row per item, its cells as `columns` say."""
    headers = [header for header, _, _ in columns]
    rows = [
        [write(item[what] if isinstance(what, str) else what(item)) for _, what, write in columns]
        for item in items
    ]
    return headers, rows


def percentile_table(run: dict[str, Any], us: str = "us") -> Table:
    """Time, nodes and guesses: p50, p90, p99, max and mean over searched rows."""
    rows = []
    for title, key, fmt in (
        (f"time {us}", "time_us", decimal),
        ("nodes", "nodes", count),
        ("guesses", "guesses", count),
    ):
        s = run["stats"][key]
        rows.append([title, *(fmt(s[q]) for q in QUANTILE_NAMES), decimal(s["mean"])])
    return ["", *QUANTILE_NAMES, "mean"], rows


def clue_table(run: dict[str, Any], us: str = "us") -> Table:
    """Per clue count: rows, % no guess, nodes and time at p50 and p90."""
    columns: list[Column] = [
        ("clues", "clues", str),
        ("rows", "rows", count),
        ("% no guess", "no_guess_pct", decimal),
        ("nodes p50", "nodes_p50", count),
        ("nodes p90", "nodes_p90", count),
        (f"{us} p50", "time_p50_us", decimal),
        (f"{us} p90", "time_p90_us", decimal),
    ]
    return table(columns, run["by_clues"])


def grade_table(run: dict[str, Any], us: str = "us") -> Table:
    """Per grade: rows, share, nodes and time at p50 and the median difficulty."""
    columns: list[Column] = [
        ("grade", "grade", str),
        ("rows", "rows", count),
        ("%", "share_pct", decimal),
        ("nodes p50", "nodes_p50", count),
        (f"{us} p50", "time_p50_us", decimal),
        ("difficulty p50", "difficulty_p50", decimal),
    ]
    return table(columns, run["ratings"]["by_grade"])


def difficulty_line(run: dict[str, Any]) -> str:
    """The difficulty's spread, and how it ranks with the nodes this run searched."""
    d = run["ratings"]["difficulty"]
    rank = run["ratings"]["difficulty_nodes_spearman"]
    return (
        f"difficulty (mean guesses over symmetries): p50 {decimal(d['p50'])}, p90 "
        f"{decimal(d['p90'])}, p99 {decimal(d['p99'])}, max {decimal(d['max'])}; rank "
        f"correlation with this run's nodes {decimal(rank, 2)}"
    )


def hardest_table(run: dict[str, Any], key: str, us: str = "us") -> Table:
    """The hardest puzzles (`key`: hardest_by_nodes or hardest_by_time), the puzzle last."""
    columns: list[Column] = [
        ("row", "row", str),
        ("id", "id", lambda i: NONE if i is None else str(i)),
        ("clues", "clues", str),
        ("verdict", "verdict", str),
        ("nodes", "nodes", count),
        ("guesses", "guesses", count),
        (f"time {us}", "time_us", decimal),
        ("puzzle", "puzzle", lambda p: p or NONE),
    ]
    return table(columns, run[key])


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{count(n)} {word if n == 1 else plural or word + 's'}"


KERNEL_RATE = "kernel, per core"


def wall_label(meta: dict[str, Any]) -> str:
    """What a run's recorded rows/s is: `wall, 2 workers, with start-up` for `solve`;
    `wall, 1 worker, kernels loaded first, best of 3` for `bench`."""
    workers = meta.get("workers")
    on = _plural(workers, "worker") if isinstance(workers, int) else "workers not recorded"
    if meta.get("command") == "bench":
        best = f", best of {meta['repeats']}" if meta.get("repeats") else ""
        return f"wall, {on}, kernels loaded first{best}"
    return f"wall, {on}, with start-up"


def side_by_side_table(data: dict[str, Any], us: str = "us") -> Table:
    """One row per run: the figures to compare at a glance (with the corpus when there are
    several: runs of different corpora are only ever side by side)."""
    columns: list[Column] = [
        ("run", "label", str),
        ("rows", "rows", count),
        ("solved", lambda r: r["verdicts"].get("solved", 0), count),
        ("kernel/s", "kernel_per_s", lambda v: decimal(v, 0)),
        ("wall rows/s", lambda r: r["metadata"].get("rows_per_s"), lambda v: decimal(v, 0)),
        (f"{us} p50", lambda r: r["stats"]["time_us"]["p50"], decimal),
        (f"{us} p99", lambda r: r["stats"]["time_us"]["p99"], decimal),
        ("nodes mean", lambda r: r["stats"]["nodes"]["mean"], decimal),
        ("nodes p99", lambda r: r["stats"]["nodes"]["p99"], count),
        ("guesses mean", lambda r: r["stats"]["guesses"]["mean"], decimal),
        ("% no guess", "no_guess_pct", decimal),
    ]
    if len(data["corpora"]) > 1:
        columns.insert(1, ("corpus", "corpus", str))
    return table(columns, data["runs"])


def rate_notes(data: dict[str, Any]) -> list[str]:
    """What the two rates of the side-by-side table are, run by run where they differ."""
    walls = sorted({wall_label(r["metadata"]) for r in data["runs"]})
    return [
        "kernel/s: searched rows over their summed kernel time (solve_ns), one core, nothing "
        "else counted",
        "wall rows/s: rows over the run's wall time as its file records it ("
        + "; ".join(walls)
        + ")",
    ]


# `ratio_table`'s columns; those written as ratios are coloured on the page (`RATIO_COLUMNS`)
RATIO_TABLE: list[Column] = [
    ("run", "run", str),
    ("baseline", "baseline", str),
    ("puzzles", "compared_rows", count),
    ("nodes p50", "nodes_p50", ratio),
    ("nodes geo", "nodes_geomean", ratio),
    ("nodes p90", "nodes_p90", ratio),
    ("% fewer", "nodes_less_pct", decimal),
    ("time p50", "time_p50", ratio),
    ("time geo", "time_geomean", ratio),
    ("time p90", "time_p90", ratio),
    ("% faster", "time_less_pct", decimal),
]
# the cells of `ratio_table` that are ratios, and the comparison figure each shows
RATIO_COLUMNS = {j: what for j, (_, what, write) in enumerate(RATIO_TABLE) if write is ratio}


def ratio_table(comparisons: list[dict[str, Any]]) -> Table:
    """One row per compared run: its per-puzzle ratios over its baseline's."""
    return table(RATIO_TABLE, comparisons)


def comparison_notes(comparisons: list[dict[str, Any]]) -> list[str]:
    """Sentences on how each pair was joined: the key, puzzles in one run only, repeated
    puzzles, puzzles whose verdict differs."""
    notes = []
    for c in comparisons:
        run, base = c["run"], c["baseline"]
        notes.append(
            f"{run} and {base}: joined by {KEY_SENTENCE[c['key']]}; "
            f"{_plural(c['common'], 'puzzle')} in both, {count(c['compared_rows'])} searched "
            f"by both"
        )
        if c["only_in_baseline"] or c["only_in_run"]:
            notes.append(
                f"note: {_plural(c['only_in_baseline'], 'puzzle')} only in {base}, "
                f"{count(c['only_in_run'])} only in {run}: left out of the ratios"
            )
        for label, repeats in ((base, c["baseline_repeats"]), (run, c["run_repeats"])):
            if repeats:
                notes.append(
                    f"note: {label} has {_plural(repeats, 'row')} repeating an earlier puzzle: "
                    "each puzzle is compared once, at its first row"
                )
        if c["verdict_changes"]:
            notes.append(
                f"note: {_plural(c['verdict_changes'], 'puzzle')} "
                f"{'has' if c['verdict_changes'] == 1 else 'have'} another verdict in {run} "
                f"than in {base}"
            )
    return notes


KEY_SENTENCE = {
    "canonical": "canonical form (the `canonical` column of both files)",
    "puzzle": "puzzle string (no `canonical` column in both files)",
}


def corpus_notes(data: dict[str, Any]) -> list[str]:
    """Why runs are not compared per puzzle: for every corpus after the first, the puzzles
    it shares with the closest other one."""
    notes = []
    for corpus in data["corpora"][1:]:
        runs = ", ".join(corpus["runs"])
        if corpus["apart_from"] is None:
            continue
        notes.append(
            f"{runs} and {corpus['apart_from']} are different corpora: they share "
            f"{_plural(corpus['common_with_it'], 'puzzle')} "
            f"({decimal(corpus['common_pct'])}% of the smaller; one corpus takes "
            f"{SAME_CORPUS:.0%}), so they are shown side by side without per-puzzle ratios"
        )
    return notes


def align(table: Table, indent: str = "  ", left: int = 1) -> list[str]:
    """Columns padded to their widest cell; the first `left` (names) left-aligned, the others
    (figures) right-aligned."""
    headers, rows = table
    widths = [max(len(c) for c in col) for col in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        parts = [
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return (indent + "  ".join(parts)).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def _header(run: dict[str, Any]) -> list[str]:
    meta = run["metadata"]
    lines = [f"== {run['label']}  ({run['path']}) =="]
    source = f" from {meta['input']}" if meta.get("input") else ""
    lines.append(f"rows: {count(run['rows'])}{source}")
    if run["kernel_per_s"] is not None:
        lines.append(
            f"kernel rate: {decimal(run['kernel_per_s'], 0)} puzzles/s ({KERNEL_RATE}: "
            f"{count(run['searched'])} searched rows in {decimal(run['kernel_s'], 3)} s of "
            "kernel time)"
        )
    if meta.get("rows_per_s") is not None:
        rate, wall = decimal(meta["rows_per_s"], 0), decimal(meta.get("wall_s"), 2)
        lines.append(
            f"wall rate: {rate} rows/s ({wall_label(meta)}: wall {wall} s; "
            f"{meta.get('command') or 'run'} {meta.get('started_at') or ''}".rstrip()
            + ")"
        )
    if meta.get("strategy") is not None:
        options = [
            f"{k} {'none' if meta[k] is None else meta[k]}"
            for k in ("strategy", "solutions", "max_nodes")
        ]
        lines.append("options: " + ", ".join(options))
    if meta.get("version") or meta.get("cpu"):
        lines.append(
            f"recorded by: sudoku-pipeline {meta.get('version') or '?'} "
            f"on {meta.get('cpu') or 'unknown CPU'}"
        )
    return lines + [f"note: {note}" for note in run["notes"]]


def _run_text(run: dict[str, Any]) -> list[str]:
    lines = _header(run)
    total = run["rows"]
    verdicts = "  ".join(
        f"{v} {count(n)} ({decimal(percent(n, total))}%)" for v, n in run["verdicts"].items() if n
    )
    lines.append(f"verdicts: {verdicts or 'no rows'}")
    lines.append(
        f"searched: {count(run['searched'])} rows; solved without guessing: "
        f"{count(run['no_guess'])} ({decimal(run['no_guess_pct'])}%)"
    )
    if not run["searched"]:
        return lines
    lines += ["", "percentiles over searched rows:", *align(percentile_table(run))]
    lines += ["", "by clue count:", *align(clue_table(run))]
    if run.get("ratings"):
        lines += [
            "",
            f"by grade ({count(run['ratings']['rated'])} rated puzzles):",
            *align(grade_table(run)),
            "  " + difficulty_line(run),
        ]
    for key, title in (("hardest_by_nodes", "nodes"), ("hardest_by_time", "time")):
        lines += ["", f"hardest {len(run[key])} by {title}:", *align(hardest_table(run, key))]
    return lines


SIDE_BY_SIDE = "== side by side (time in us over searched rows) =="
PER_PUZZLE = "== per puzzle: run / baseline, joined by puzzle (< 1: less than the baseline) =="


def render_text(report: Report) -> str:
    """The terminal summary: each run, then the runs side by side, then the ratios."""
    data = report.to_dict()
    lines: list[str] = []
    for run in data["runs"]:
        lines += [*_run_text(run), ""]
    if len(data["runs"]) > 1:
        left = 2 if len(data["corpora"]) > 1 else 1
        lines += [SIDE_BY_SIDE, *align(side_by_side_table(data), left=left)]
        lines += [f"  {note}" for note in rate_notes(data) + corpus_notes(data)] + [""]
    if data["comparisons"]:
        lines += [PER_PUZZLE, *align(ratio_table(data["comparisons"]), left=2)]
        lines += [f"  {note}" for note in comparison_notes(data["comparisons"])] + [""]
    return "\n".join(lines).rstrip() + "\n"
