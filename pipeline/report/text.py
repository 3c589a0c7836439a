"""The report's tables as formatted cells, and the terminal summary made of them.

Every table is built once here, as `(headers, rows)` of strings, from `Report.to_dict()`; the
terminal aligns them, the HTML page puts them in `<table>`s. Integers (rows, nodes, guesses)
print with thousands separators; times in microseconds and percentages with one decimal;
ratios with two decimals below 10; each rounded half up from its exact value, by the one
helper of `pipeline.results.measures` (`fixed`).
"""

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


def percentile_table(run: dict[str, Any], us: str = "us") -> Table:
    """Time, nodes and guesses: p50, p90, p99, max and mean over searched rows."""
    rows = []
    for title, key, fmt in ((f"time {us}", "time_us", decimal), ("nodes", "nodes", count),
                            ("guesses", "guesses", count)):  # fmt: skip
        s = run["stats"][key]
        rows.append([title, *(fmt(s[q]) for q in QUANTILE_NAMES), decimal(s["mean"])])
    return ["", *QUANTILE_NAMES, "mean"], rows


def clue_table(run: dict[str, Any], us: str = "us") -> Table:
    """Per clue count: rows, % no guess, nodes and time at p50 and p90."""
    headers = ["clues", "rows", "% no guess", "nodes p50", "nodes p90", f"{us} p50", f"{us} p90"]
    rows = [
        [str(c["clues"]), count(c["rows"]), decimal(c["no_guess_pct"]), count(c["nodes_p50"]),
         count(c["nodes_p90"]), decimal(c["time_p50_us"]), decimal(c["time_p90_us"])]
        for c in run["by_clues"]
    ]  # fmt: skip
    return headers, rows


def grade_table(run: dict[str, Any], us: str = "us") -> Table:
    """Per grade of the technique ladder (`solve --rate`): rows, share, median nodes, time and
    difficulty."""
    headers = ["grade", "rows", "%", "nodes p50", f"{us} p50", "difficulty p50"]
    rows = [
        [g["grade"], count(g["rows"]), decimal(g["share_pct"]), count(g["nodes_p50"]),
         decimal(g["time_p50_us"]), decimal(g["difficulty_p50"])]
        for g in run["ratings"]["by_grade"]
    ]  # fmt: skip
    return headers, rows


def difficulty_line(run: dict[str, Any]) -> str:
    """The difficulty's spread, and how it ranks with the nodes this run searched."""
    d = run["ratings"]["difficulty"]
    rank = run["ratings"]["difficulty_nodes_spearman"]
    return (f"difficulty (mean guesses over symmetries): p50 {decimal(d['p50'])}, p90 "
            f"{decimal(d['p90'])}, p99 {decimal(d['p99'])}, max {decimal(d['max'])}; rank "
            f"correlation with this run's nodes {decimal(rank, 2)}")  # fmt: skip


def hardest_table(run: dict[str, Any], key: str, us: str = "us") -> Table:
    """The hardest puzzles (`key`: hardest_by_nodes or hardest_by_time), the puzzle last."""
    headers = ["row", "id", "clues", "verdict", "nodes", "guesses", f"time {us}", "puzzle"]
    rows = [
        [str(h["row"]), NONE if h["id"] is None else str(h["id"]), str(h["clues"]), h["verdict"],
         count(h["nodes"]), count(h["guesses"]), decimal(h["time_us"]), h["puzzle"] or NONE]
        for h in run[key]
    ]  # fmt: skip
    return headers, rows


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
    with_corpus = len(data["corpora"]) > 1
    headers = ["run", *(["corpus"] if with_corpus else []), "rows", "solved",
               "kernel/s", "wall rows/s", f"{us} p50", f"{us} p99", "nodes mean", "nodes p99",
               "guesses mean", "% no guess"]  # fmt: skip
    rows = []
    for run in data["runs"]:
        s = run["stats"]
        rows.append(
            [run["label"], *([run["corpus"]] if with_corpus else []), count(run["rows"]),
             count(run["verdicts"].get("solved", 0)), decimal(run["kernel_per_s"], 0),
             decimal(run["metadata"].get("rows_per_s"), 0),
             decimal(s["time_us"]["p50"]), decimal(s["time_us"]["p99"]),
             decimal(s["nodes"]["mean"]), count(s["nodes"]["p99"]),
             decimal(s["guesses"]["mean"]), decimal(run["no_guess_pct"])]
        )  # fmt: skip
    return headers, rows


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


# the cells of `ratio_table` that are ratios, and the comparison figure each shows
RATIO_COLUMNS = {3: "nodes_p50", 4: "nodes_geomean", 5: "nodes_p90", 7: "time_p50",
                 8: "time_geomean", 9: "time_p90"}  # fmt: skip


def ratio_table(comparisons: list[dict[str, Any]]) -> Table:
    """One row per compared run: its per-puzzle ratios over its baseline's."""
    headers = ["run", "baseline", "puzzles", "nodes p50", "nodes geo", "nodes p90", "% fewer",
               "time p50", "time geo", "time p90", "% faster"]  # fmt: skip
    rows = [
        [c["run"], c["baseline"], count(c["compared_rows"]),
         ratio(c["nodes_p50"]), ratio(c["nodes_geomean"]), ratio(c["nodes_p90"]),
         decimal(c["nodes_less_pct"]), ratio(c["time_p50"]), ratio(c["time_geomean"]),
         ratio(c["time_p90"]), decimal(c["time_less_pct"])]
        for c in comparisons
    ]  # fmt: skip
    return headers, rows


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
        options = [f"{k} {'none' if meta[k] is None else meta[k]}"
                   for k in ("strategy", "solutions", "max_nodes")]  # fmt: skip
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
        lines += ["", f"by grade ({count(run['ratings']['rated'])} rated puzzles):",
                  *align(grade_table(run)), "  " + difficulty_line(run)]  # fmt: skip
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
