"""How the report's plots are drawn (matplotlib, Agg: no display): the style, a figure made and
encoded as base64 PNG, panels, legends, log axes labelled in plain numbers, long names cut to
fit. The plots themselves are in `plots` (solver runs) and `score_plots` (score runs).

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
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

PALETTE = ("#2364AA", "#EA7317", "#7B4FA0", "#3DA5D9", "#C44536", "#4D9078", "#B5838D", "#8C6D31")
NAME_WIDTH = 24  # characters of a run's name inside a plot; longer ones are cut in the middle
DPI = 144
STYLE = {
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


@contextmanager
def new_figure(width: float, height: float) -> Iterator[Figure]:
    with rc_context(STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


def to_png(fig: Figure) -> tuple[str, float]:
    """The figure as base64 PNG text (for `<img src="data:image/png;base64,...">`) and its
    width in inches (to show every plot at the same scale, so that fonts match)."""
    buf = io.BytesIO()
    with rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    return base64.b64encode(buf.getvalue()).decode("ascii"), float(fig.get_size_inches()[0])


PANEL = (3.3, 2.55)  # inches per small panel
PAIR = 2.6  # inches per panel of the two-panel plots: two such plots fit side by side
LEGEND = 0.3  # inches of the top band a figure legend takes


def grid_axes(fig: Figure, n: int, ncols: int = 3) -> list[Axes]:
    cols = max(1, min(ncols, n))
    rows = -(-n // cols)
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return axes[:n]


def panels_size(n: int, ncols: int = 3, extra: float = 0.2) -> tuple[float, float]:
    cols = max(1, min(ncols, n))
    return PANEL[0] * cols, extra + PANEL[1] * -(-n // cols)


def fit_name(name: str, width: int = NAME_WIDTH) -> str:
    """A name of at most `width` characters, cut in the middle: `forum_ha…e_change`."""
    if len(name) <= width:
        return name
    keep = width - 1
    return f"{name[: (keep + 1) // 2]}…{name[len(name) - keep // 2 :]}"


def wrap_title(text: str, width: int = 30) -> str:
    """Long titles on two lines, broken at the first ' / ' (else ': '), each line cut in the
    middle when still longer than `width` + 6."""
    if len(text) <= width:
        return text
    for sep in (" / ", ": "):
        if sep in text:
            head, _, tail = text.partition(sep)
            return f"{fit_name(head + sep.rstrip(), width + 6)}\n{fit_name(tail, width + 6)}"
    return fit_name(text, width + 6)


def legend_columns(names: list[str], inches: float) -> int:
    """As many legend columns as fit in `inches` (about 0.075 inch a character at 8.5 pt,
    plus the line sample), at most 4."""
    widest = max(len(n) for n in names) * 0.075 + 0.6
    return max(1, min(4, len(names), int(inches // widest)))


def plain_number(value: float, _pos: object = None) -> str:
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


def log_axis(ax: Axes, which: str, low: float, high: float, floor: float = 0.0) -> None:
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
    axis.set_major_formatter(FuncFormatter(plain_number))
    axis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10) * 1.0))
    axis.set_minor_formatter(NullFormatter())
