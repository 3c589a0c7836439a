"""The solver runs' plots (matplotlib, drawn as `figures` says), each a `Figure` that
`figures.to_png` encodes for the page.

One colour per verdict everywhere, one colour per run (per strategy when the runs of every
corpus differ by strategy, so that `fast` has the same colour on every dataset).
Plots of many points draw a seeded sample of at most `MAX_POINTS`; curves use quantiles.
Runs are named inside a plot by what tells them apart (`short_names`, `legend_names`).
"""

import re

import numpy as np
import polars as pl
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from pipeline.kernels.codes import VERDICT_NAMES
from pipeline.kernels.registry import STRATEGIES
from pipeline.report.compare import Corpus, Pair
from pipeline.report.figures import (
    LEGEND,
    NAME_WIDTH,
    PAIR,
    PALETTE,
    PANEL,
    fit_name,
    grid_axes,
    legend_columns,
    log_axis,
    new_figure,
    panels_size,
    wrap_title,
)
from pipeline.report.ratings import rating_figures
from pipeline.report.runs import Run
from pipeline.report.text import ratio
from pipeline.results.measures import searched

VERDICT_COLORS = {
    "solved": "#2E9E6B",
    "multiple": "#E8A33D",
    "unsolvable": "#D1495B",
    "invalid": "#8E6BBF",
    "limit": "#6C7A89",
    "malformed": "#A0765B",
    "found": "#7FB77E",
    "wrong_answer": "#3B3B3B",
    "solver_error": "#B0B0B0",
}
# one colour per strategy, in the registry's order, the same on every plot and page
STRATEGY_COLORS = dict(zip(STRATEGIES, PALETTE, strict=False))
MAX_POINTS = 20_000
MIN_CLUES = 17  # fewer givens never make a unique puzzle: left out of the clue-count plot


def _by_strategy(corpus: Corpus) -> bool:
    """The runs of the corpus differ by strategy (each a known one): name them by it."""
    strategies = [r.strategy for r in corpus.runs]
    return len(set(strategies)) == len(strategies) and all(s in STRATEGY_COLORS for s in strategies)


def run_colors(corpora: list[Corpus]) -> dict[str, str]:
    """A colour per run label: by strategy when each corpus's runs differ by strategy, else by
    the run's position among all runs."""
    runs = [r for c in corpora for r in c.runs]
    if all(_by_strategy(c) for c in corpora):
        return {r.label: STRATEGY_COLORS[r.strategy] for r in runs}  # type: ignore[index]
    return {r.label: PALETTE[i % len(PALETTE)] for i, r in enumerate(runs)}


_SEPARATORS = re.compile(r"([ _/.:#+-]+)")


def _distinct(labels: list[str]) -> list[str]:
    """What tells the labels apart: their words without the common prefix and suffix
    (`v1 / fast`, `v2 / fast` -> `v1`, `v2`); the labels themselves when that leaves a
    name empty or two alike."""
    if len(labels) < 2:
        return labels
    words = [_SEPARATORS.split(label) for label in labels]
    shortest = min(len(w) for w in words)
    head = 0
    while head < shortest and len({tuple(w[: head + 1]) for w in words}) == 1:
        head += 1
    tail = 0
    while tail < shortest - head and len({tuple(w[len(w) - tail - 1 :]) for w in words}) == 1:
        tail += 1
    names = ["".join(w[head : len(w) - tail]).strip(" _/.:#+-") for w in words]
    return names if all(names) and len(set(names)) == len(names) else labels


def _short(run: Run, corpus: Corpus) -> str:
    """A run's name inside a plot of its corpus: its strategy when that tells the corpus's
    runs apart, else what its label has that the others' lack."""
    if _by_strategy(corpus) and run.strategy:
        return run.strategy
    names = _distinct([r.label for r in corpus.runs])
    return fit_name(names[next(i for i, r in enumerate(corpus.runs) if r is run)])


def short_names(pair: Pair, corpus: Corpus) -> tuple[str, str]:
    """The names of a pair's baseline and run inside the plots of their corpus."""
    return _short(pair.baseline, corpus), _short(pair.run, corpus)


def legend_names(corpus: Corpus) -> dict[str, str]:
    """The runs' names in the plots of the corpus that are neither their label nor their
    strategy, with the label each stands for (for the captions)."""
    names = {}
    for run in corpus.runs:
        short = _short(run, corpus)
        if short not in (run.label, run.strategy):
            names[short] = run.label
    return names


def _axis_label(name: str, what: str, width: int = NAME_WIDTH) -> str:
    """`fast: nodes`, or for a longer name `v2 / fast:\nnodes`."""
    text = f"{name}: {what}"
    return text if len(text) <= width else f"{name}:\n{what}"


def nodes_histograms(runs: list[Run]) -> Figure:
    """Per run, a histogram of search nodes (log x, log y), one colour per verdict."""
    width, height = panels_size(len(runs))
    with new_figure(width, height + LEGEND) as fig:
        top = max((int(r.frame["nodes"].max() or 1) for r in runs), default=1)
        edges = np.unique(np.geomspace(1, max(top, 2) * 1.3, 40).round()) - 0.5  # whole nodes
        shown: set[str] = set()
        for ax, run in zip(grid_axes(fig, len(runs)), runs, strict=True):
            done = searched(run.frame)
            most = 1
            for verdict in VERDICT_NAMES:
                nodes = done.filter(pl.col("verdict") == verdict)["nodes"].drop_nulls().to_numpy()
                if nodes.size == 0:
                    continue
                shown.add(verdict)
                color = VERDICT_COLORS[verdict]
                heights, _, _ = ax.hist(
                    nodes, bins=edges, histtype="stepfilled", color=color, alpha=0.35
                )
                ax.hist(nodes, bins=edges, histtype="step", color=color, linewidth=1.2)
                most = max(most, int(heights.max()))
            log_axis(ax, "x", edges[0], edges[-1], floor=1.0)
            log_axis(ax, "y", 0.5, most * 1.5)
            ax.set_title(wrap_title(run.label, 24), loc="left")
            ax.set_xlabel("search nodes per puzzle")
            ax.set_ylabel("puzzles")
        handles = [
            Patch(color=VERDICT_COLORS[v], alpha=0.6, label=v) for v in VERDICT_NAMES if v in shown
        ]
        if handles:
            fig.legend(handles=handles, loc="outside upper right", ncols=len(handles))
        return fig


def _curve(values: np.ndarray, points: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """(x, % of puzzles <= x): the empirical CDF, at most `points` steps."""
    ordered = np.sort(values)
    if ordered.size > points:
        idx = np.linspace(0, ordered.size - 1, points).round().astype(int)
    else:
        idx = np.arange(ordered.size)
    return ordered[idx], 100.0 * (idx + 1) / ordered.size


def time_cdf(corpora: list[Corpus], colors: dict[str, str]) -> Figure:
    """Per corpus, the share of puzzles solved within a time (log x), one line per run."""
    width, height = panels_size(len(corpora))
    with new_figure(max(width, 3.9), height + 0.3) as fig:
        for ax, corpus in zip(grid_axes(fig, len(corpora)), corpora, strict=True):
            low, high = np.inf, 0.0
            for run in corpus.runs:
                us = searched(run.frame)["solve_ns"].to_numpy() / 1000.0
                us = us[us > 0]
                if us.size:
                    x, y = _curve(us)
                    low, high = min(low, x[0]), max(high, x[-1])
                    ax.step(
                        x,
                        y,
                        where="post",
                        color=colors[run.label],
                        linewidth=1.8,
                        label=_short(run, corpus),
                    )
            for level in (50, 90, 99):
                ax.axhline(level, color="#9aa3ad", linewidth=0.7, linestyle=":")
            if high > 0:
                log_axis(ax, "x", low / 1.2, high * 1.2)
            else:
                log_axis(ax, "x", 1, 10)
            ax.set_ylim(0, 101)
            ax.set_title(wrap_title(corpus.name), loc="left")
            ax.set_xlabel("kernel time per puzzle (µs)")
            ax.set_ylabel("% of puzzles this fast")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="lower right")
        return fig


def _by_clues(run: Run, column: str, scale: float) -> pl.DataFrame:
    return (
        searched(run.frame)
        .filter((pl.col("clues") >= MIN_CLUES) & (pl.col(column) > 0))
        .group_by("clues")
        .agg(
            (pl.col(column).quantile(q, interpolation="nearest") / scale).alias(name)
            for name, q in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9))
        )
        .sort("clues")
    )


def _consecutive(x: np.ndarray) -> list[slice]:
    """Slices of runs of consecutive clue counts: lines do not bridge gaps."""
    breaks = np.flatnonzero(np.diff(x) > 1) + 1
    bounds = [0, *breaks.tolist(), len(x)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def clue_effort(corpora: list[Corpus], colors: dict[str, str]) -> Figure:
    """Per corpus, median nodes and time against clue count (band: 10th to 90th percentile),
    over puzzles of at least `MIN_CLUES` givens."""
    metrics = (("nodes", 1.0, "search nodes"), ("solve_ns", 1000.0, "kernel time (µs)"))
    legend: dict[tuple[str, str], Artist] = {}  # (name, colour): two corpora may share a name
    with new_figure(2 * PAIR, LEGEND + 0.2 + (PANEL[1] + 0.25) * len(corpora)) as fig:
        subfigs = fig.subfigures(len(corpora), 1, squeeze=False).ravel()
        for corpus, sub in zip(corpora, subfigs, strict=True):
            sub.suptitle(
                wrap_title(corpus.name, 44), x=0.02, ha="left", fontsize=10.5, fontweight="bold"
            )
            for ax, (column, scale, what) in zip(sub.subplots(1, 2), metrics, strict=True):
                low, high = np.inf, 0.0
                for run in corpus.runs:
                    stats = _by_clues(run, column, scale)
                    x = stats["clues"].to_numpy()
                    if x.size:
                        low = min(low, stats["p10"].min())  # type: ignore[arg-type]
                        high = max(high, stats["p90"].max())  # type: ignore[arg-type]
                    color = colors[run.label]
                    for part in _consecutive(x):
                        ax.fill_between(
                            x[part],
                            stats["p10"].to_numpy()[part],
                            stats["p90"].to_numpy()[part],
                            color=color,
                            alpha=0.15,
                            linewidth=0,
                        )
                        (line,) = ax.plot(
                            x[part],
                            stats["p50"].to_numpy()[part],
                            color=color,
                            marker="o",
                            markersize=3.5,
                            linewidth=1.8,
                        )
                        legend.setdefault((_short(run, corpus), color), line)
                floor = 1.0 if column == "nodes" else 0.0
                if high > 0:
                    log_axis(ax, "y", low / 1.3, high * 1.3, floor)
                else:
                    log_axis(ax, "y", 1, 10, floor)
                ax.set_xlabel("clues (givens)")
                ax.set_ylabel(f"{what}, median")
                ax.set_title(what.split(" (")[0].capitalize(), loc="left", fontweight="normal")
                ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=3))
                left, right = ax.get_xlim()
                if right - left < 4:  # one or two clue counts: whole numbers around them
                    middle = (left + right) / 2
                    ax.set_xlim(middle - 2.5, middle + 2.5)
        if legend:
            names = [name for name, _ in legend]
            fig.legend(
                legend.values(),
                names,
                loc="outside upper right",
                ncols=legend_columns(names, 2 * PAIR),
            )
        return fig


def pair_scatter(pair: Pair, corpus: Corpus, colors: dict[str, str]) -> Figure:
    """Per puzzle, `pair.run` against `pair.baseline` (log-log): nodes and time, with the
    diagonal; the titles quote the median ratios over every puzzle searched by both, the
    points are a seeded sample of at most `MAX_POINTS` of them."""
    other, joined = pair.run, pair.joined
    if joined.height > MAX_POINTS:
        joined = joined.sample(MAX_POINTS, seed=0)
    names = short_names(pair, corpus)
    with new_figure(2 * PAIR, PANEL[1] + 0.9) as fig:
        axes = fig.subplots(1, 2)
        metrics = (
            ("nodes", 1.0, "nodes", "nodes_p50"),
            ("solve_ns", 1000.0, "time (µs)", "time_p50"),
        )
        for ax, (column, scale, what, key) in zip(axes, metrics, strict=True):
            counted = joined.drop_nulls([column, f"{column}_other"])  # nodes: a solver from outside
            x = counted[column].to_numpy() / scale
            y = counted[f"{column}_other"].to_numpy() / scale
            ax.scatter(
                x, y, s=7, alpha=0.35, color=colors[other.label], linewidths=0, rasterized=True
            )
            low, high = 1.0, 10.0
            if x.size:
                low = min(x.min(), y.min()) / 1.25
                high = max(x.max(), y.max()) * 1.25
                ax.plot([low, high], [low, high], color="#4a5561", linewidth=0.9, linestyle="--")
                name = what.split(" (")[0]
                ax.set_title(
                    f"{name}: median ratio {ratio(pair.figures[key])}",
                    loc="left",
                    fontsize=9.5,
                )
            floor = 1.0 if column == "nodes" else 0.0
            log_axis(ax, "x", low, high, floor)
            log_axis(ax, "y", low, high, floor)
            ax.set_xlabel(_axis_label(names[0], what))
            ax.set_ylabel(_axis_label(names[1], what))
        total = pair.figures["compared_rows"]
        shown = (
            f"{joined.height:,} of {total:,} puzzles (a random sample)"
            if joined.height < total
            else f"{total:,} puzzles searched by both"
        )
        fig.legend(
            handles=[
                Line2D([], [], color=colors[other.label], marker="o", linestyle="", label=shown),
                Line2D([], [], color="#4a5561", linestyle="--", label="equal"),
            ],
            loc="outside lower center",
            ncols=2,
        )
        return fig


def grade_effort(runs: list[Run]) -> Figure:
    """Per rated run: how many puzzles each grade holds (bars) and their median search nodes
    (dots, right axis), the grades in ladder order."""
    rated = [(run, rating_figures(run.frame)) for run in runs]
    rated = [(run, figures) for run, figures in rated if figures]
    width, height = panels_size(len(rated), ncols=2)
    with new_figure(max(width, 4.2), height + 0.8) as fig:
        for ax, (run, figures) in zip(grid_axes(fig, len(rated), ncols=2), rated, strict=True):
            grades = figures["by_grade"]
            y = np.arange(len(grades))
            ax.barh(y, [g["share_pct"] for g in grades], color="#8FA9C8")
            ax.set_yticks(y, [g["grade"].replace("_", " ") for g in grades])
            ax.invert_yaxis()
            ax.set_xlabel("% of rated puzzles")
            ax.set_title(wrap_title(run.label, 30), loc="left")
            nodes = ax.twiny()
            nodes.plot([g["nodes_p50"] for g in grades], y, "o", color="#C44536", markersize=4)
            top = max(g["nodes_p50"] for g in grades)
            log_axis(nodes, "x", 0.8, max(top, 2) * 1.5, floor=1.0)
            nodes.set_xlabel("median search nodes (dots)", color="#C44536")
            nodes.grid(False)
        return fig
