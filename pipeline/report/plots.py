"""The report's plots, drawn with matplotlib (Agg, no display) and returned as base64 PNG.

One colour per verdict everywhere, one colour per run (per strategy when the runs of every
corpus differ by strategy, so that `fast` has the same colour on every dataset).
Plots of many points draw a seeded sample of at most `MAX_POINTS`; curves use quantiles.
"""

import base64
import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import polars as pl
from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from pipeline.jobs.results import searched
from pipeline.report.runs import Run
from pipeline.report.text import ratio
from pipeline.solver.codes import VERDICT_NAMES
from pipeline.solver.registry import STRATEGIES

VERDICT_COLORS = {
    "solved": "#2E9E6B", "multiple": "#E8A33D", "unsolvable": "#D1495B",
    "invalid": "#8E6BBF", "limit": "#6C7A89", "malformed": "#A0765B", "found": "#7FB77E",
}  # fmt: skip
PALETTE = ("#2364AA", "#EA7317", "#7B4FA0", "#3DA5D9", "#C44536", "#4D9078", "#B5838D", "#8C6D31")
# one colour per strategy, in the registry's order, the same on every plot and page
STRATEGY_COLORS = dict(zip(STRATEGIES, PALETTE, strict=False))
MAX_POINTS = 20_000
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


def run_colors(runs: list[Run]) -> dict[str, str]:
    """A colour per run label: by strategy when each corpus's runs differ by strategy, else by
    the run's position within its corpus."""
    corpora: dict[str, list[Run]] = {}
    for run in runs:
        corpora.setdefault(run.corpus, []).append(run)
    by_strategy = all(
        len({r.strategy for r in group}) == len(group)
        and all(r.strategy in STRATEGY_COLORS for r in group)
        for group in corpora.values()
    )
    if by_strategy:
        return {r.label: STRATEGY_COLORS[r.strategy] for r in runs}  # type: ignore[index]
    return {
        r.label: PALETTE[group.index(r) % len(PALETTE)] for group in corpora.values() for r in group
    }


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


def _grid(fig: Figure, n: int, ncols: int = 3) -> list[Axes]:
    cols = max(1, min(ncols, n))
    rows = -(-n // cols)
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return axes[:n]


def _size(n: int, ncols: int = 3, extra: float = 0.45) -> tuple[float, float]:
    cols = max(1, min(ncols, n))
    return PANEL[0] * cols, extra + PANEL[1] * -(-n // cols)


def _short(run: Run) -> str:
    """A run's name inside a plot of its corpus: the strategy when that tells runs apart."""
    return run.strategy if run.corpus and run.strategy else run.label


def _wrap(text: str, width: int = 30) -> str:
    """Long titles on two lines, broken at the first ' / ' (else ': ')."""
    if len(text) <= width:
        return text
    for sep in (" / ", ": "):
        if sep in text:
            head, _, tail = text.partition(sep)
            return f"{head}{sep.rstrip()}\n{tail}"
    return text


def _title(fig: Figure, text: str) -> None:
    fig.suptitle(text, x=0.01, ha="left", fontsize=12, fontweight="bold", color="#1f2a35")


def nodes_histograms(runs: list[Run]) -> Figure:
    """Per run, a histogram of search nodes (log x, log y), one colour per verdict."""
    with _figure(*_size(len(runs))) as fig:
        top = max((int(r.frame["nodes"].max() or 1) for r in runs), default=1)
        edges = np.unique(np.geomspace(1, max(top, 2) * 1.3, 40).round()) - 0.5  # whole nodes
        shown: set[str] = set()
        for ax, run in zip(_grid(fig, len(runs)), runs, strict=True):
            done = searched(run.frame)
            for verdict in VERDICT_NAMES:
                nodes = done.filter(pl.col("verdict") == verdict)["nodes"].to_numpy()
                if nodes.size == 0:
                    continue
                shown.add(verdict)
                color = VERDICT_COLORS[verdict]
                ax.hist(nodes, bins=edges, histtype="stepfilled", color=color, alpha=0.35)
                ax.hist(nodes, bins=edges, histtype="step", color=color, linewidth=1.2)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_ylim(bottom=0.5)
            ax.set_title(_wrap(run.label), loc="left")
            ax.set_xlabel("search nodes per puzzle")
            ax.set_ylabel("puzzles")
        _title(fig, "Search effort by verdict")
        handles = [
            Patch(color=VERDICT_COLORS[v], alpha=0.6, label=v) for v in VERDICT_NAMES if v in shown
        ]
        if handles:
            fig.legend(handles=handles, loc="outside upper right", ncols=len(handles))
        return fig


def _corpora(runs: list[Run]) -> dict[str, list[Run]]:
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.corpus, []).append(run)
    return groups


def _curve(values: np.ndarray, points: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """(x, % of puzzles <= x): the empirical CDF, at most `points` steps."""
    ordered = np.sort(values)
    if ordered.size > points:
        idx = np.linspace(0, ordered.size - 1, points).round().astype(int)
    else:
        idx = np.arange(ordered.size)
    return ordered[idx], 100.0 * (idx + 1) / ordered.size


def time_cdf(runs: list[Run], colors: dict[str, str]) -> Figure:
    """Per corpus, the share of puzzles solved within a time (log x), one line per run."""
    groups = _corpora(runs)
    width, height = _size(len(groups))
    with _figure(max(width, 3.9), height + 0.3) as fig:
        for ax, (corpus, group) in zip(_grid(fig, len(groups)), groups.items(), strict=True):
            for run in group:
                us = searched(run.frame)["solve_ns"].to_numpy() / 1000.0
                us = us[us > 0]
                if us.size:
                    x, y = _curve(us)
                    ax.step(
                        x,
                        y,
                        where="post",
                        color=colors[run.label],
                        linewidth=1.8,
                        label=_short(run),
                    )
            for level in (50, 90, 99):
                ax.axhline(level, color="#9aa3ad", linewidth=0.7, linestyle=":")
            ax.set_xscale("log")
            ax.set_ylim(0, 101)
            if corpus:
                ax.set_title(_wrap(corpus), loc="left")
            ax.set_xlabel("kernel time per puzzle (µs)")
            ax.set_ylabel("% of puzzles this fast")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="lower right")
        _title(fig, "Solve time, cumulative")
        return fig


def _by_clues(run: Run, column: str, scale: float) -> pl.DataFrame:
    return (
        searched(run.frame)
        .filter(pl.col("clues").is_not_null() & (pl.col(column) > 0))
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


def clue_effort(runs: list[Run], colors: dict[str, str]) -> Figure:
    """Per corpus, median nodes and time against clue count (band: 10th to 90th percentile)."""
    groups = _corpora(runs)
    metrics = (("nodes", 1.0, "search nodes"), ("solve_ns", 1000.0, "time (µs)"))
    legend: dict[str, Artist] = {}
    with _figure(2 * PAIR, 0.5 + (PANEL[1] + 0.25) * len(groups)) as fig:
        subfigs = fig.subfigures(len(groups), 1, squeeze=False).ravel()
        for (corpus, group), sub in zip(groups.items(), subfigs, strict=True):
            if corpus:
                sub.suptitle(corpus, x=0.02, ha="left", fontsize=10.5, fontweight="bold")
            for ax, (column, scale, what) in zip(sub.subplots(1, 2), metrics, strict=True):
                for run in group:
                    stats = _by_clues(run, column, scale)
                    x = stats["clues"].to_numpy()
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
                        legend.setdefault(_short(run), line)
                ax.set_yscale("log")
                ax.set_xlabel("clues (givens)")
                ax.set_ylabel(f"{what}, median")
                ax.set_title(what.split(" (")[0].capitalize(), loc="left", fontweight="normal")
                ax.xaxis.get_major_locator().set_params(integer=True)
        _title(fig, "Effort by clue count")
        if legend:
            fig.legend(
                legend.values(), legend.keys(), loc="outside upper right", ncols=min(3, len(legend))
            )
        return fig


def pair_scatter(
    base: Run, other: Run, colors: dict[str, str], comparison: dict[str, Any]
) -> Figure:
    """Per puzzle, `other` against `base` (log-log): nodes and time, with the diagonal; the
    titles quote the median ratios of `comparison` (`report.compare`), over every puzzle."""
    keep = ["row", "nodes", "solve_ns"]
    joined = (
        searched(base.frame)
        .select(keep)
        .join(searched(other.frame).select(keep), on="row", suffix="_other")
    )
    joined = joined.filter(
        (pl.col("nodes") > 0)
        & (pl.col("nodes_other") > 0)
        & (pl.col("solve_ns") > 0)
        & (pl.col("solve_ns_other") > 0)
    )
    if joined.height > MAX_POINTS:
        joined = joined.sample(MAX_POINTS, seed=0)
    names = (
        (_short(base), _short(other)) if base.corpus == other.corpus else (base.label, other.label)
    )
    with _figure(2 * PAIR, PANEL[1] + 0.9) as fig:
        axes = fig.subplots(1, 2)
        metrics = (
            ("nodes", 1.0, "nodes", "nodes_p50"),
            ("solve_ns", 1000.0, "time (µs)", "time_p50"),
        )
        for ax, (column, scale, what, key) in zip(axes, metrics, strict=True):
            x = joined[column].to_numpy() / scale
            y = joined[f"{column}_other"].to_numpy() / scale
            ax.scatter(
                x, y, s=7, alpha=0.35, color=colors[other.label], linewidths=0, rasterized=True
            )
            if x.size:
                low = min(x.min(), y.min()) * 0.8
                high = max(x.max(), y.max()) * 1.25
                ax.plot([low, high], [low, high], color="#4a5561", linewidth=0.9, linestyle="--")
                name = what.split(" (")[0]
                ax.set_title(f"{name}: median ratio {ratio(comparison[key])}", loc="left")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(f"{names[0]}: {what}")
            ax.set_ylabel(f"{names[1]}: {what}")
        corpus = f"{base.corpus}: " if base.corpus and base.corpus == other.corpus else ""
        _title(fig, _wrap(f"{corpus}{names[1]} against {names[0]}", 40))
        fig.text(
            0.01,
            0.005,
            f"{joined.height:,} puzzles searched by both",
            fontsize=8.5,
            color="#4a5561",
        )
        fig.legend(
            handles=[Line2D([], [], color="#4a5561", linestyle="--", label="equal")],
            loc="outside lower right",
        )
        return fig
