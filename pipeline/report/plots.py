"""The report's plots, drawn with matplotlib (Agg, no display) and returned as base64 PNG.

One colour per verdict everywhere, one colour per run (per strategy when the runs of every
corpus differ by strategy, so that `fast` has the same colour on every dataset).
Plots of many points draw a seeded sample of at most `MAX_POINTS`; curves use quantiles.

Legibility, checked on screenshots of reports of one to four runs (tests/test_report.py):
* the plot titles are the page's (HTML), not drawn in the image, so that no title can sit
  under a legend; a figure's legend has the top band of the image to itself;
* log axes show at least one decade, ticks labelled in plain numbers (`2`, `50`, `1k`) at
  1-2-5 steps when the range is short, so that minor labels never run into each other;
* long axis labels (a run's full label) break onto two lines rather than run over a
  neighbouring panel or off the image.
"""

import base64
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import polars as pl
from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from pipeline.kernels.codes import VERDICT_NAMES
from pipeline.kernels.registry import STRATEGIES
from pipeline.report.compare import Corpus, Pair
from pipeline.report.ratings import rating_figures
from pipeline.report.runs import Run
from pipeline.report.text import ratio
from pipeline.results.measures import searched

VERDICT_COLORS = {
    "solved": "#2E9E6B", "multiple": "#E8A33D", "unsolvable": "#D1495B",
    "invalid": "#8E6BBF", "limit": "#6C7A89", "malformed": "#A0765B", "found": "#7FB77E",
    "wrong_answer": "#3B3B3B", "solver_error": "#B0B0B0",
}  # fmt: skip
PALETTE = ("#2364AA", "#EA7317", "#7B4FA0", "#3DA5D9", "#C44536", "#4D9078", "#B5838D", "#8C6D31")
# one colour per strategy, in the registry's order, the same on every plot and page
STRATEGY_COLORS = dict(zip(STRATEGIES, PALETTE, strict=False))
MAX_POINTS = 20_000
MIN_CLUES = 17  # fewer givens never make a unique puzzle: left out of the clue-count plot
DPI = 144
_STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 9.5,
    "axes.titlesize": 10.5,
    "axes.titleweight": "bold",
    "axes.labelsize": 9.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#d9dde3",
    "grid.linewidth": 0.6,
    "axes.edgecolor": "#9aa3ad",
    "axes.axisbelow": True,
    "legend.frameon": False,
    "legend.fontsize": 8.5,
    "xtick.color": "#4a5561",
    "ytick.color": "#4a5561",
    "axes.labelcolor": "#2b333b",
}


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


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
    with rc_context(_STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


def to_png(fig: Figure) -> tuple[str, float]:
    """The figure as base64 PNG text (for `<img src="data:image/png;base64,...">`) and its
    width in inches (to show every plot at the same scale, so that fonts match)."""
    buf = io.BytesIO()
    with rc_context(_STYLE):
        fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    return base64.b64encode(buf.getvalue()).decode("ascii"), float(fig.get_size_inches()[0])


PANEL = (3.3, 2.55)  # inches per small panel
PAIR = 2.6  # inches per panel of the two-panel plots: two such plots fit side by side
LEGEND = 0.3  # inches of the top band a figure legend takes


def _grid(fig: Figure, n: int, ncols: int = 3) -> list[Axes]:
    cols = max(1, min(ncols, n))
    rows = -(-n // cols)
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return axes[:n]


def _size(n: int, ncols: int = 3, extra: float = 0.2) -> tuple[float, float]:
    cols = max(1, min(ncols, n))
    return PANEL[0] * cols, extra + PANEL[1] * -(-n // cols)


NAME_WIDTH = 24  # characters of a run's name inside a plot; longer ones are cut in the middle
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


def _fit(name: str, width: int = NAME_WIDTH) -> str:
    """A name of at most `width` characters, cut in the middle: `forum_ha…e_change`."""
    if len(name) <= width:
        return name
    keep = width - 1
    return f"{name[: (keep + 1) // 2]}…{name[len(name) - keep // 2 :]}"


def _short(run: Run, corpus: Corpus) -> str:
    """A run's name inside a plot of its corpus: its strategy when that tells the corpus's
    runs apart, else what its label has that the others' lack."""
    if _by_strategy(corpus) and run.strategy:
        return run.strategy
    names = _distinct([r.label for r in corpus.runs])
    return _fit(names[next(i for i, r in enumerate(corpus.runs) if r is run)])


def short_names(pair: Pair, corpus: Corpus) -> tuple[str, str]:
    """The names of a pair's baseline and run inside the plots of their corpus."""
    return _short(pair.baseline, corpus), _short(pair.run, corpus)


def _wrap(text: str, width: int = 30) -> str:
    """Long titles on two lines, broken at the first ' / ' (else ': '), each line cut in the
    middle when still longer than `width` + 6."""
    if len(text) <= width:
        return text
    for sep in (" / ", ": "):
        if sep in text:
            head, _, tail = text.partition(sep)
            return f"{_fit(head + sep.rstrip(), width + 6)}\n{_fit(tail, width + 6)}"
    return _fit(text, width + 6)


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


def _legend_columns(names: list[str], inches: float) -> int:
    """As many legend columns as fit in `inches` (about 0.075 inch a character at 8.5 pt,
    plus the line sample), at most 4."""
    widest = max(len(n) for n in names) * 0.075 + 0.6
    return max(1, min(4, len(names), int(inches // widest)))


def _plain(value: float, _pos: object = None) -> str:
    """A tick label in plain numbers: 0.2, 5, 50, 1,000, 20k, 3M."""
    if value <= 0:
        return ""
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e4:
        return f"{value / 1e3:g}k"
    if value >= 1:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _log_axis(ax: Axes, which: str, low: float, high: float, floor: float = 0.0) -> None:
    """A log axis over [low, high] widened to at least one decade (never below `floor`, as
    for node counts, which start at 1), labelled in plain numbers: every decade, or 1-2-5
    steps when it spans two decades or less."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    low, high = max(low, 1e-9), max(high, 1e-9)
    if high / low < 10:
        middle = np.sqrt(low * high)
        low, high = middle / np.sqrt(10) / 1.05, middle * np.sqrt(10) * 1.05
    if floor and low < floor / 1.2:
        low, high = floor / 1.2, max(high, floor * 10.5)
    (ax.set_xlim if which == "x" else ax.set_ylim)(low, high)
    decades = np.log10(high / low)
    subs = (1.0, 2.0, 5.0) if decades <= 2.2 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(_plain))
    axis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10) * 1.0))
    axis.set_minor_formatter(NullFormatter())


def nodes_histograms(runs: list[Run]) -> Figure:
    """Per run, a histogram of search nodes (log x, log y), one colour per verdict."""
    width, height = _size(len(runs))
    with _figure(width, height + LEGEND) as fig:
        top = max((int(r.frame["nodes"].max() or 1) for r in runs), default=1)
        edges = np.unique(np.geomspace(1, max(top, 2) * 1.3, 40).round()) - 0.5  # whole nodes
        shown: set[str] = set()
        for ax, run in zip(_grid(fig, len(runs)), runs, strict=True):
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
            _log_axis(ax, "x", edges[0], edges[-1], floor=1.0)
            _log_axis(ax, "y", 0.5, most * 1.5)
            ax.set_title(_wrap(run.label, 24), loc="left")
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
    width, height = _size(len(corpora))
    with _figure(max(width, 3.9), height + 0.3) as fig:
        for ax, corpus in zip(_grid(fig, len(corpora)), corpora, strict=True):
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
                _log_axis(ax, "x", low / 1.2, high * 1.2)
            else:
                _log_axis(ax, "x", 1, 10)
            ax.set_ylim(0, 101)
            ax.set_title(_wrap(corpus.name), loc="left")
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
    with _figure(2 * PAIR, LEGEND + 0.2 + (PANEL[1] + 0.25) * len(corpora)) as fig:
        subfigs = fig.subfigures(len(corpora), 1, squeeze=False).ravel()
        for corpus, sub in zip(corpora, subfigs, strict=True):
            sub.suptitle(_wrap(corpus.name, 44), x=0.02, ha="left", fontsize=10.5,
                         fontweight="bold")  # fmt: skip
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
                    _log_axis(ax, "y", low / 1.3, high * 1.3, floor)
                else:
                    _log_axis(ax, "y", 1, 10, floor)
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
                ncols=_legend_columns(names, 2 * PAIR),
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
    with _figure(2 * PAIR, PANEL[1] + 0.9) as fig:
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
            _log_axis(ax, "x", low, high, floor)
            _log_axis(ax, "y", low, high, floor)
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
    width, height = _size(len(rated), ncols=2)
    with _figure(max(width, 4.2), height + 0.8) as fig:
        for ax, (run, figures) in zip(_grid(fig, len(rated), ncols=2), rated, strict=True):
            grades = figures["by_grade"]
            y = np.arange(len(grades))
            ax.barh(y, [g["share_pct"] for g in grades], color="#8FA9C8")
            ax.set_yticks(y, [g["grade"].replace("_", " ") for g in grades])
            ax.invert_yaxis()
            ax.set_xlabel("% of rated puzzles")
            ax.set_title(_wrap(run.label, 30), loc="left")
            nodes = ax.twiny()
            nodes.plot([g["nodes_p50"] for g in grades], y, "o", color="#C44536", markersize=4)
            top = max(g["nodes_p50"] for g in grades)
            _log_axis(nodes, "x", 0.8, max(top, 2) * 1.5, floor=1.0)
            nodes.set_xlabel("median search nodes (dots)", color="#C44536")
            nodes.grid(False)
        return fig
