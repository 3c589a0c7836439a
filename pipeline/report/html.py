"""The HTML report: one self-contained page (inline CSS, plots as base64 PNG, no scripts, no
network) with a card per run, the comparisons, the plots, then the detailed tables."""

import datetime
import html
from typing import Any

from pipeline.io.runinfo import package_version
from pipeline.report import plots
from pipeline.report.plots import VERDICT_COLORS, run_colors
from pipeline.report.runs import Report
from pipeline.report.text import (
    RATIO_COLUMNS,
    Table,
    clue_table,
    comparison_notes,
    count,
    decimal,
    hardest_table,
    percentile_table,
    ratio_table,
    side_by_side_table,
)

CSS = """
:root { --ink:#1f2a35; --muted:#5f6b78; --line:#e3e7ec; --bg:#f6f7f9; }
* { box-sizing:border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif; }
main { max-width:1240px; margin:0 auto; padding:28px 24px 48px; }
h1 { font-size:26px; margin:0 0 4px; }
h2 { font-size:18px; margin:34px 0 12px; padding-bottom:6px; border-bottom:1px solid var(--line); }
h3 { font-size:15px; margin:18px 0 8px; }
.sub, .note, .path { color:var(--muted); font-size:13px; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(340px,1fr)); gap:14px; }
.card { background:#fff; border:1px solid var(--line); border-left:6px solid var(--c);
  border-radius:8px; padding:14px 16px; }
.card h3 { margin:0; font-size:16px; }
.tiles { display:grid; grid-template-columns:repeat(3,1fr); gap:8px 12px; margin:12px 0 10px; }
.tile b { display:block; font-size:20px; white-space:nowrap; font-variant-numeric:tabular-nums; }
.tile span { color:var(--muted); font-size:12px; }
.chips { display:flex; flex-wrap:wrap; gap:6px; }
.chip { font-size:12px; padding:2px 9px; border-radius:99px; background:#eef1f4; }
.chip i, .swatch { display:inline-block; width:9px; height:9px; border-radius:50%;
  background:var(--c); margin-right:5px; }
.plots { display:flex; flex-wrap:wrap; gap:16px; align-items:flex-start; }
figure { margin:0; max-width:100%; background:#fff; border:1px solid var(--line); border-radius:8px;
  padding:10px; }
figure img { display:block; width:100%; height:auto; }
figcaption { color:var(--muted); font-size:13px; margin-top:6px; }
table { border-collapse:collapse; background:#fff; font-size:13px; margin-bottom:8px;
  font-variant-numeric:tabular-nums; }
th, td { padding:4px 10px; border-bottom:1px solid var(--line); text-align:right; }
th { background:#f0f2f5; font-weight:600; }
td { white-space:nowrap; }
th:first-child, td:first-child { text-align:left; }
.details { display:grid; grid-template-columns:repeat(auto-fit,minmax(460px,1fr)); gap:8px 24px; }
.better { color:#1d7a4f; font-weight:600; } .worse { color:#b23a48; font-weight:600; }
footer { margin-top:40px; color:var(--muted); font-size:12.5px; }
"""

NO_DATA = "—"
PX_PER_INCH = 105


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(table: Table, cells: dict[tuple[int, int], str] | None = None) -> str:
    """A `report_text` table as HTML, its cells escaped, some replaced by `cells[(row, col)]`
    (markup: colour swatches, coloured ratios)."""
    headers, rows = table
    cells = cells or {}
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{cells.get((i, j), _e(c))}</td>" for j, c in enumerate(row))
        + "</tr>"
        for i, row in enumerate(rows)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _label(label: str, colors: dict[str, str]) -> str:
    return f'<i class="swatch" style="--c:{colors[label]}"></i>{_e(label)}'


def duration(us: float | None) -> str:
    """Microseconds for people: `3.6 µs`, `1.63 ms`, `2.10 s`."""
    if us is None:
        return NO_DATA
    if us < 1000:
        return f"{us:.1f} µs"
    return f"{us / 1000:.2f} ms" if us < 1e6 else f"{us / 1e6:.2f} s"


def _card(run: dict[str, Any], color: str, verdict_colors: dict[str, str]) -> str:
    meta, stats = run["metadata"], run["stats"]
    rate, no_guess = meta.get("rows_per_s"), run["no_guess_pct"]
    tiles = [
        (count(run["rows"]), "rows"),
        (NO_DATA if rate is None else decimal(rate, 0), "rows/s, as run"),
        (NO_DATA if no_guess is None else f"{decimal(no_guess)}%", "solved without guessing"),
        (duration(stats["time_us"]["p50"]), "median solve time"),
        (duration(stats["time_us"]["p99"]), "99th percentile time"),
        (decimal(stats["nodes"]["mean"]) if run["searched"] else NO_DATA, "nodes per puzzle"),
    ]
    tile_html = "".join(
        f'<div class="tile"><b>{_e(v)}</b><span>{_e(t)}</span></div>' for v, t in tiles
    )
    chips = "".join(
        f'<span class="chip" style="--c:{verdict_colors.get(v, "#999")}"><i></i>{_e(v)} '
        f"{count(n)}</span>"
        for v, n in run["verdicts"].items()
        if n
    )
    options = ", ".join(
        f"{k} {meta[k]}"
        for k in ("strategy", "solutions", "max_nodes", "workers")
        if meta.get(k) is not None
    )
    return (
        f'<div class="card" style="--c:{color}"><h3>{_e(run["label"])}</h3>'
        f'<div class="path">{_e(run["path"])}</div><div class="tiles">{tile_html}</div>'
        f'<div class="chips">{chips}</div>'
        f'<div class="note" style="margin-top:8px">{_e(options)}</div></div>'
    )


def _comparisons(comparisons: list[dict[str, Any]], colors: dict[str, str]) -> str:
    """The ratio table, labels with their colour, ratios green below 0.95 and red above 1.05."""
    table = ratio_table(comparisons)
    cells = {}
    for i, (row, c) in enumerate(zip(table[1], comparisons, strict=True)):
        cells[(i, 0)], cells[(i, 1)] = _label(row[0], colors), _label(row[1], colors)
        for j, key in RATIO_COLUMNS.items():
            value = c[key]
            css = (
                ""
                if value is None
                else "better"
                if value < 0.95
                else "worse"
                if value > 1.05
                else ""
            )
            cells[(i, j)] = f'<span class="{css}">{_e(row[j])}</span>'
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in comparison_notes(comparisons))
    return _table(table, cells) + notes


def _details(run: dict[str, Any], colors: dict[str, str]) -> str:
    title = f"<h3>{_label(run['label'], colors)}</h3>"
    if not run["searched"]:
        return f"{title}<p class='note'>No searched rows.</p>"
    left = (
        f"<h3>Percentiles (searched rows)</h3>{_table(percentile_table(run, 'µs'))}"
        f"<h3>By clue count</h3>{_table(clue_table(run, 'µs'))}"
    )
    right = "".join(
        f"<h3>Hardest {len(run[key])} by {what}</h3>{_table(hardest_table(run, key, 'µs'))}"
        for key, what in (("hardest_by_nodes", "nodes"), ("hardest_by_time", "time"))
    )
    return f"{title}<div class='details'><div>{left}</div><div>{right}</div></div>"


def _figure(image: tuple[str, float], alt: str, caption: str) -> str:
    """A plot at PX_PER_INCH, whatever its size, so that every plot's fonts look the same."""
    png, inches = image
    return (
        f'<figure style="width:{round(inches * PX_PER_INCH) + 22}px">'
        f'<img alt="{_e(alt)}" src="data:image/png;base64,{png}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _plots(report: Report, colors: dict[str, str]) -> str:
    runs = report.runs
    figures = [
        _figure(
            plots.to_png(plots.nodes_histograms(runs)),
            "Histogram of search nodes",
            "Search nodes per puzzle, by verdict (log scales). Most puzzles need one node "
            "(the root) when propagation alone solves them.",
        ),
        _figure(
            plots.to_png(plots.time_cdf(runs, colors)),
            "Solve time CDF",
            "Share of puzzles solved within a given kernel time; dotted lines at 50, 90 and "
            "99%. Further left is faster.",
        ),
        _figure(
            plots.to_png(plots.clue_effort(runs, colors)),
            "Effort by clue count",
            "Median nodes and time per clue count; the band spans the 10th to 90th percentile.",
        ),
    ]
    labels = [r.label for r in runs]
    for c in report.comparisons:
        base, other = runs[labels.index(c["baseline"])], runs[labels.index(c["run"])]
        figures.append(
            _figure(
                plots.to_png(plots.pair_scatter(base, other, colors, c)),
                f"{other.label} against {base.label}",
                f"Each dot is one puzzle: {other.label} (up) against {base.label} (right); "
                "below the dashed line the run needs less than the baseline.",
            )
        )
    return "<h2>Plots</h2><div class='plots'>" + "".join(figures) + "</div>"


def render_html(report: Report) -> str:
    """The whole page as one string."""

    data = report.to_dict()
    colors = run_colors(report.runs)
    cards = "".join(_card(r, colors[r["label"]], VERDICT_COLORS) for r in data["runs"])
    sections = [f"<h2>Runs</h2><div class='cards'>{cards}</div>"]
    if len(data["runs"]) > 1:
        table = side_by_side_table(data["runs"], "µs")
        swatches = {(i, 0): _label(row[0], colors) for i, row in enumerate(table[1])}
        sections.append(f"<h2>Side by side</h2>{_table(table, swatches)}")
    if data["comparisons"]:
        sections.append(
            "<h2>Per puzzle, joined on row</h2><p class='note'>Ratios are the run's figure over "
            "the baseline's for the same puzzle (p50: median, geo: geometric mean); below 1 "
            "(green) the run needs less.</p>" + _comparisons(data["comparisons"], colors)
        )
    sections.append(_plots(report, colors))
    sections.append("<h2>Details</h2>" + "".join(_details(r, colors) for r in data["runs"]))
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    files = sorted({str(r.path) for r in report.runs})
    runs = len(report.runs)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Sudoku solver report</title><style>{CSS}</style></head>
<body><main>
<h1>Sudoku solver report</h1>
<p class="sub">{runs} run{"s" if runs != 1 else ""} from {_e(", ".join(files))}
 · made {stamp} by sudoku-pipeline {_e(package_version())}</p>
{"".join(sections)}
<footer>Searched rows: every verdict but invalid and malformed; time, nodes and guesses figures
are over them. Percentiles are observed values (nearest rank). Time is the kernel's time per
puzzle; rows/s is the throughput recorded by the run that wrote the file. A node is a board
state the search examines (the root counts one); a guess is a digit placed by choice at a cell
with two or more candidates.</footer>
</main></body></html>
"""
