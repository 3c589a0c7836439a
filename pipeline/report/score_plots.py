"""The score runs' plots (matplotlib, the `plots` module's style and PNG encoding): accuracy by
clue count, by grade and by difficulty, one line or bar group per run, its colour the same on
every plot. Figures come from `ScoreReport.to_dict()`; nothing here computes a figure."""

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from pipeline.report.figures import LEGEND, PALETTE, legend_columns, new_figure, wrap_title

SCORE_VERDICT_COLORS = {
    "correct": "#2E9E6B",
    "wrong": "#D1495B",
    "givens_changed": "#8E6BBF",
    "incomplete": "#E8A33D",
    "malformed": "#A0765B",
}
WIDTH, HEIGHT = 5.4, 3.0  # inches of one plot


def score_colors(data: dict[str, Any]) -> dict[str, str]:
    """A colour per score run, by its position."""
    return {r["label"]: PALETTE[i % len(PALETTE)] for i, r in enumerate(data["runs"])}


def _legend(fig: Figure, ax: Axes, labels: list[str], width: float) -> None:
    if len(labels) > 1:
        fig.legend(
            *ax.get_legend_handles_labels(),
            loc="outside upper center",
            ncols=legend_columns(labels, width),
        )


def accuracy_by_group(data: dict[str, Any], key: str, name: str, xlabel: str) -> Figure:
    """Accuracy per group (`key`: by_clues, by_grade, by_difficulty) of each run that has
    them: lines over the clue counts; else a bar per run and group, the groups down the side
    (grades in ladder order, difficulty bins in order), so that long names need no turning."""
    runs = [r for r in data["runs"] if r[key]]
    colors = score_colors(data)
    labels = [r["label"] for r in runs]
    extra = LEGEND * (1 + (len(runs) > 2)) if len(runs) > 1 else 0.0
    if key == "by_clues":
        with new_figure(WIDTH, HEIGHT + extra) as fig:
            ax = fig.subplots()
            for run in runs:
                x = [g[name] for g in run[key]]
                y = [100 * g["accuracy"] for g in run[key]]
                ax.plot(
                    x,
                    y,
                    "o-",
                    color=colors[run["label"]],
                    label=wrap_title(run["label"], 40),
                    markersize=3.5,
                    linewidth=1.4,
                )
            ax.set_xlabel(xlabel)
            ax.set_ylim(0, 104)
            ax.set_yticks([0, 25, 50, 75, 100])
            ax.set_ylabel("% correct")
            _legend(fig, ax, labels, WIDTH)
            return fig
    groups: list[str] = []
    for run in runs:  # the order of the first run that has a group, then the others'
        groups += [g[name] for g in run[key] if g[name] not in groups]
    step = 0.16 * len(runs) + 0.12  # inches a group takes
    with new_figure(WIDTH, 0.9 + step * len(groups) + extra) as fig:
        ax = fig.subplots()
        y, width = np.arange(len(groups)), 0.8 / max(len(runs), 1)
        for i, run in enumerate(runs):
            by = {g[name]: g for g in run[key]}
            shares = [100 * by[g]["accuracy"] if g in by else 0.0 for g in groups]
            ax.barh(
                y + (i - (len(runs) - 1) / 2) * width,
                shares,
                width * 0.92,
                color=colors[run["label"]],
                label=wrap_title(run["label"], 40),
            )
        ax.set_yticks(y, [str(g).replace("_", " ") for g in groups])
        ax.invert_yaxis()
        ax.set_ylabel(xlabel)
        ax.set_xlim(0, 100)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_xlabel("% correct")
        ax.grid(axis="y", visible=False)
        _legend(fig, ax, labels, WIDTH)
        return fig


def verdict_bars(data: dict[str, Any]) -> Figure:
    """Each run's rows by verdict, as one stacked bar of percentages."""
    runs = data["runs"]
    names = [v.replace("_", " ") for v in SCORE_VERDICT_COLORS]
    columns = legend_columns(names, WIDTH)
    height = 0.6 + 0.42 * len(runs) + LEGEND * -(-len(names) // columns)
    with new_figure(WIDTH, height) as fig:
        ax = fig.subplots()
        y = np.arange(len(runs))
        left = np.zeros(len(runs))
        for verdict, color in SCORE_VERDICT_COLORS.items():
            share = np.array(
                [100 * r["verdicts"].get(verdict, 0) / r["rows"] if r["rows"] else 0 for r in runs]
            )
            ax.barh(y, share, left=left, color=color, label=verdict.replace("_", " "))
            left += share
        ax.set_yticks(y, [wrap_title(r["label"], 28) for r in runs])
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of rows")
        ax.grid(axis="y", visible=False)
        fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncols=columns)
        return fig
