"""The HTML report: one self-contained page (inline CSS, plots as base64 PNG, no scripts, no
network) with a card per run, the comparisons, the plots, then the detailed tables.

Every sentence that states a fact about the data is computed from it (the captions included);
the fixed sentences are definitions."""

from collections.abc import Callable
from typing import Any

from pipeline.report import plots
from pipeline.report.compare import Pair
from pipeline.report.figures import to_png
from pipeline.report.model import Report
from pipeline.report.page import NO_DATA, card, escape, figure, html_table, page
from pipeline.report.plots import MAX_POINTS, MIN_CLUES, VERDICT_COLORS, run_colors
from pipeline.report.text import (
    KERNEL_RATE,
    KEY_SENTENCE,
    RATIO_COLUMNS,
    Table,
    clue_table,
    comparison_notes,
    corpus_notes,
    count,
    decimal,
    difficulty_line,
    grade_table,
    hardest_table,
    percentile_table,
    rate_notes,
    ratio_table,
    side_by_side_table,
    wall_label,
)
from pipeline.results.measures import exact, fixed


def _label(label: str, colors: dict[str, str]) -> str:
    return f'<i class="swatch" style="--c:{colors[label]}"></i>{escape(label)}'


def duration(us: float | None) -> str:
    """Microseconds for people: `3.6 µs`, `1.63 ms`, `2.10 s` (the exact figure, scaled)."""
    if us is None:
        return NO_DATA
    value = exact(us)
    if us < 1000:
        return f"{fixed(value, 1)} µs"
    return f"{fixed(value.scaleb(-3), 2)} ms" if us < 1e6 else f"{fixed(value.scaleb(-6), 2)} s"


def _card(run: dict[str, Any], color: str) -> str:
    meta, stats = run["metadata"], run["stats"]
    rate, kernel, no_guess = meta.get("rows_per_s"), run["kernel_per_s"], run["no_guess_pct"]
    searched = bool(run["searched"])
    tiles = [
        (count(run["rows"]), "rows"),
        (NO_DATA if kernel is None else decimal(kernel, 0), f"puzzles/s, {KERNEL_RATE}"),
        (NO_DATA if rate is None else decimal(rate, 0), f"rows/s, {wall_label(meta)}"),
        (duration(stats["time_us"]["p50"]), "median kernel time"),
        (duration(stats["time_us"]["p99"]), "99th percentile time"),
        (NO_DATA if no_guess is None else f"{decimal(no_guess)}%", "solved without guessing"),
        (decimal(stats["nodes"]["mean"]) if searched else NO_DATA, "nodes per puzzle, mean"),
        (decimal(stats["guesses"]["mean"]) if searched else NO_DATA, "guesses per puzzle, mean"),
        (count(run["searched"]), "searched rows"),
    ]
    options = ", ".join(
        f"{k} {meta[k]}"
        for k in ("strategy", "solutions", "max_nodes", "workers")
        if meta.get(k) is not None
    )
    where = f"{run['path']} · corpus {run['corpus']}"
    return card(run, color, where, tiles, VERDICT_COLORS, options)


def _comparisons(comparisons: list[dict[str, Any]], colors: dict[str, str]) -> str:
    """The ratio table, labels with their colour, ratios green below 0.95 and red above 1.05."""
    table = ratio_table(comparisons)
    cells = {}
    for i, (row, c) in enumerate(zip(table[1], comparisons, strict=True)):
        cells[(i, 0)], cells[(i, 1)] = _label(row[0], colors), _label(row[1], colors)
        for j, key in RATIO_COLUMNS.items():
            value = c[key]
            css = ""
            if value is not None:
                css = "better" if value < 0.95 else "worse" if value > 1.05 else ""
            cells[(i, j)] = f'<span class="{css}">{escape(row[j])}</span>'
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in comparison_notes(comparisons))
    return html_table(table, cells, left=2) + notes


def _puzzles(table: Table) -> dict[tuple[int, int], str]:
    """The puzzle cells of a hardest table as code a click selects whole (to copy)."""
    last = len(table[0]) - 1
    return {
        (i, last): f'<code class="pz" title="click to select, then copy">{escape(row[last])}</code>'
        for i, row in enumerate(table[1])
    }


def _details(run: dict[str, Any], colors: dict[str, str]) -> str:
    title = f"<h3>{_label(run['label'], colors)}</h3>"
    if not run["searched"]:
        return f"{title}<p class='note'>No searched rows.</p>"
    tables = (
        f"<div class='details'><div><h3>Percentiles (searched rows)</h3>"
        f"{html_table(percentile_table(run, 'µs'))}</div>"
        f"<div><h3>By clue count</h3>{html_table(clue_table(run, 'µs'))}</div></div>"
    )
    if run.get("ratings"):
        tables += (
            f"<h3>By grade</h3>{html_table(grade_table(run, 'µs'))}"
            f"<p class='note'>{escape(difficulty_line(run))}</p>"
        )
    for key, what in (("hardest_by_nodes", "nodes"), ("hardest_by_time", "kernel time")):
        table = hardest_table(run, key, "µs")
        body = html_table(table, _puzzles(table), "hardest")
        tables += f"<h3>Hardest {len(run[key])} by {what}</h3>{body}"
    return title + tables


# --- captions: every fact in them computed from the data ---------------------------------------


def _listing(parts: list[str]) -> str:
    return "; ".join(parts) if parts else "no searched rows"


def _searched_runs(data: dict[str, Any], figure: Callable[[dict[str, Any]], str]) -> str:
    """The runs that searched rows, each by its label and `figure(run)`, as a listing."""
    return _listing([f"{r['label']} {figure(r)}" for r in data["runs"] if r["searched"]])


def nodes_caption(data: dict[str, Any]) -> str:
    shares = _searched_runs(
        data,
        lambda r: (
            f"{decimal(r['one_node_pct'])}% ({count(r['one_node'])} of {count(r['searched'])})"
        ),
    )
    return (
        "Search nodes per puzzle, by verdict (log scales). Puzzles solved at the root, one "
        f"node, by propagation alone: {shares}."
    )


def time_caption(data: dict[str, Any]) -> str:
    medians = _searched_runs(data, lambda r: duration(r["stats"]["time_us"]["p50"]))
    return (
        "Share of puzzles solved within a given kernel time (log scale); dotted lines at 50, "
        f"90 and 99%; further left is faster. Median kernel time: {medians}."
    )


def clue_caption(data: dict[str, Any]) -> str:
    parts = []
    for corpus in data["corpora"]:
        first = next(r for r in data["runs"] if r["label"] == corpus["baseline"])
        counts = {c["clues"]: c["rows"] for c in first["by_clues"]}
        kept = {k: n for k, n in counts.items() if k >= MIN_CLUES}
        left_out = sum(n for k, n in counts.items() if k < MIN_CLUES)
        if not counts:
            continue
        text = f"{corpus['name']}: "
        if kept:
            few = sorted(k for k, n in kept.items() if n < 5)
            text += (
                f"{len(kept)} clue counts from {min(kept)} to {max(kept)}"
                if len(kept) > 1
                else f"1 clue count, {min(kept)}"
            )
            if few:
                listed = ", ".join(map(str, few))
                text += f", {len(few)} of them with fewer than 5 puzzles ({listed})"
        else:
            text += "no puzzle with 17 givens or more"
        if left_out:
            text += f"; {count(left_out)} left out with fewer than {MIN_CLUES} givens"
        parts.append(text)
    return (
        "Median nodes and kernel time per clue count (puzzles searched, 17 givens or more: "
        "fewer never make a unique puzzle); the band spans the 10th to 90th percentile. "
        f"{_listing(parts)}."
    )


def scatter_title(corpus: str, names: tuple[str, str]) -> str:
    return f"{corpus}: {names[1]} against {names[0]}"


def scatter_caption(pair: Pair, names: tuple[str, str]) -> str:
    c = pair.figures
    base, run = names
    total = c["compared_rows"]
    sample = f" (a random sample of {MAX_POINTS:,} of them is drawn)" if total > MAX_POINTS else ""
    return (
        f"Each dot is one of the {total:,} puzzles searched by both{sample}, joined by "
        f"{KEY_SENTENCE[c['key']].split(' (')[0]}: {run} (up) against {base} (right); below "
        f"the dashed line {run} needs less. {run} needs fewer nodes for "
        f"{decimal(c['nodes_less_pct'])}% of them and less time for "
        f"{decimal(c['time_less_pct'])}%."
    )


def names_sentence(report: Report) -> str:
    """` In the plots: before = v1 / fast; ...` for the runs named by a part of their label."""
    names = {k: v for c in report.corpora for k, v in plots.legend_names(c).items()}
    if not names:
        return ""
    return " In the plots: " + "; ".join(f"{k} = {v}" for k, v in names.items()) + "."


def _plots(report: Report, data: dict[str, Any], colors: dict[str, str]) -> str:
    names = names_sentence(report)
    figures = [
        figure(
            to_png(plots.nodes_histograms(report.runs)),
            "Search effort by verdict",
            nodes_caption(data),
        ),
        figure(
            to_png(plots.time_cdf(report.corpora, colors)),
            "Solve time, cumulative",
            time_caption(data) + names,
        ),
        figure(
            to_png(plots.clue_effort(report.corpora, colors)),
            "Effort by clue count",
            clue_caption(data) + names,
        ),
    ]
    rated = [run for run in data["runs"] if run.get("ratings")]
    if rated:
        figures.append(
            figure(
                to_png(plots.grade_effort(report.runs)),
                "Puzzles and effort by grade",
                f"Share of rated puzzles at each grade of the technique ladder (bars) and their "
                f"median search nodes (dots), for {len(rated)} rated run"
                f"{'s' if len(rated) != 1 else ''}; the hardest step a person needs, easiest "
                "first.",
            )
        )
    for pair in report.pairs:
        corpus = report.corpus_of(pair.run)
        short = plots.short_names(pair, corpus)
        figures.append(
            figure(
                to_png(plots.pair_scatter(pair, corpus, colors)),
                scatter_title(corpus.name, short),
                scatter_caption(pair, short) + names,
            )
        )
    return "<h2>Plots</h2><div class='plots'>" + "".join(figures) + "</div>"


def render_html(report: Report) -> str:
    """The whole page as one string."""

    data = report.to_dict()
    colors = run_colors(report.corpora)
    cards = "".join(_card(r, colors[r["label"]]) for r in data["runs"])
    sections = [f"<h2>Runs</h2><div class='cards'>{cards}</div>"]
    if len(data["runs"]) > 1:
        table = side_by_side_table(data, "µs")
        swatches = {(i, 0): _label(row[0], colors) for i, row in enumerate(table[1])}
        notes = "".join(f"<p class='note'>{escape(n)}.</p>" for n in rate_notes(data))
        apart = "".join(f"<p class='note'><b>{escape(n)}.</b></p>" for n in corpus_notes(data))
        left = 2 if len(data["corpora"]) > 1 else 1
        sections.append(
            f"<h2>Side by side</h2>{html_table(table, swatches, left=left)}{notes}{apart}"
        )
    if data["comparisons"]:
        sections.append(
            "<h2>Per puzzle, joined by puzzle</h2><p class='note'>Ratios are the run's figure "
            "over the baseline's for the same puzzle (p50: median, geo: geometric mean); below "
            "1 (green) the run needs less.</p>" + _comparisons(data["comparisons"], colors)
        )
    sections.append(_plots(report, data, colors))
    sections.append("<h2>Details</h2>" + "".join(_details(r, colors) for r in data["runs"]))
    runs, corpora = len(report.runs), len(report.corpora)
    what = (
        f"{runs} run{'s' if runs != 1 else ''} of {corpora} corp{'ora' if corpora != 1 else 'us'}"
    )
    files = [str(r.path) for r in report.runs]
    return page("Sudoku solver report", what, files, "".join(sections), FOOTER)


FOOTER = """
<footer>Searched rows: every verdict but invalid and malformed; time, nodes and guesses figures
are over them. Percentiles are observed values (nearest rank). Kernel time is the solver's own
time per puzzle (solve_ns); the kernel rate is searched rows over its sum, on one core. The wall
rate is rows over the wall time the run recorded: for solve, all its workers, start-up and
compiling included; for bench, the solve step alone, kernels loaded first. Runs are compared
by puzzle (canonical form when both files have it), never by row. A node is a board state the
search examines (the root counts one); a guess is a digit placed by choice at a cell with two
or more candidates.</footer>"""
