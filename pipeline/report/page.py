"""The building blocks of the HTML report, for the solver runs' part (`html`) and the score
runs' (`score_html`) alike: the page itself (inline CSS, no scripts, no network), tables,
figures, cards of figures with their verdicts as chips, escaping.
"""

import datetime
import html
from typing import Any

from pipeline.errors import printable
from pipeline.io.runinfo import package_version
from pipeline.report.text import Table, count

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
.note { margin:4px 0; max-width:1000px; }
.path { overflow-wrap:anywhere; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(360px,1fr)); gap:14px; }
.card { background:#fff; border:1px solid var(--line); border-left:6px solid var(--c);
  border-radius:8px; padding:14px 16px; }
.card h3 { margin:0; font-size:16px; }
.tiles { display:grid; grid-template-columns:repeat(3,1fr); gap:8px 12px; margin:12px 0 10px; }
.tile b { display:block; font-size:20px; white-space:nowrap; font-variant-numeric:tabular-nums; }
.tile span { display:block; color:var(--muted); font-size:12px; line-height:1.3; }
.chips { display:flex; flex-wrap:wrap; gap:6px; }
.chip { font-size:12px; padding:2px 9px; border-radius:99px; background:#eef1f4; }
.chip i, .swatch { display:inline-block; width:9px; height:9px; border-radius:50%;
  background:var(--c); margin-right:5px; }
.plots { display:flex; flex-wrap:wrap; gap:16px; align-items:flex-start; }
figure { margin:0; max-width:100%; background:#fff; border:1px solid var(--line); border-radius:8px;
  padding:10px; }
figure img { display:block; width:100%; height:auto; }
figure h3 { margin:2px 4px 6px; font-size:16px; }
figcaption { color:var(--muted); font-size:13px; margin-top:6px; }
table { border-collapse:collapse; background:#fff; font-size:13px; margin-bottom:8px;
  font-variant-numeric:tabular-nums; }
th, td { padding:4px 10px; border-bottom:1px solid var(--line); text-align:right; }
th { background:#f0f2f5; font-weight:600; }
td { white-space:nowrap; }
th.l, td.l { text-align:left; }
table.hardest th:last-child, table.hardest td:last-child { text-align:left; }
code.pz { font:12px/1.3 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;
  user-select:all; -webkit-user-select:all; cursor:text; }
.details { display:grid; grid-template-columns:repeat(auto-fit,minmax(460px,1fr)); gap:8px 24px; }
.better { color:#1d7a4f; font-weight:600; } .worse { color:#b23a48; font-weight:600; }
footer { margin-top:40px; color:var(--muted); font-size:12.5px; }
"""

NO_DATA = "—"
PX_PER_INCH = 105


def escape(value: Any) -> str:
    """Text as HTML (quotes included), from any value."""
    return html.escape(str(value), quote=True)


def html_table(
    table: Table,
    cells: dict[tuple[int, int], str] | None = None,
    css: str | None = None,
    left: int = 1,
) -> str:
    """A `report.text` table as HTML, its cells escaped, some replaced by `cells[(row, col)]`
    (markup: colour swatches, coloured ratios, puzzles); the first `left` columns (names)
    aligned left, the others (figures) right."""
    headers, rows = table
    cells = cells or {}

    def align(j: int) -> str:
        return ' class="l"' if j < left else ""

    head = "".join(f"<th{align(j)}>{escape(h)}</th>" for j, h in enumerate(headers))
    body = "".join(
        "<tr>"
        + "".join(f"<td{align(j)}>{cells.get((i, j), escape(c))}</td>" for j, c in enumerate(row))
        + "</tr>"
        for i, row in enumerate(rows)
    )
    attr = f' class="{css}"' if css else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(image: tuple[str, float], title: str, caption: str) -> str:
    """A plot (`figures.to_png`) at PX_PER_INCH, whatever its size, so that every plot's fonts
    look the same; its title is the page's (no title drawn in the image can sit under its
    legend)."""
    png, inches = image
    return (
        f'<figure style="width:{round(inches * PX_PER_INCH) + 22}px"><h3>{escape(title)}</h3>'
        f'<img alt="{escape(title)}" src="data:image/png;base64,{png}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def card(
    run: dict[str, Any],
    color: str,
    where: str,
    tiles: list[tuple[str, str]],
    verdict_colors: dict[str, str],
    options: str,
) -> str:
    """A run's card: its label and `where` it comes from, its figures as tiles (value, what),
    its verdicts (`run["verdicts"]`) as chips in their colours, the `options` it ran with and
    its notes."""
    tile_html = "".join(
        f'<div class="tile"><b>{escape(v)}</b><span>{escape(t)}</span></div>' for v, t in tiles
    )
    chips = "".join(
        f'<span class="chip" style="--c:{verdict_colors.get(v, "#999")}"><i></i>{escape(v)} '
        f"{count(n)}</span>"
        for v, n in run["verdicts"].items()
        if n
    )
    return (
        f'<div class="card" style="--c:{color}"><h3>{escape(run["label"])}</h3>'
        f'<div class="path">{escape(where)}</div>'
        f'<div class="tiles">{tile_html}</div><div class="chips">{chips}</div>'
        f'<div class="note" style="margin-top:8px">{escape(options)}</div>'
        + "".join(f'<div class="note">note: {escape(n)}</div>' for n in run["notes"])
        + "</div>"
    )


def page(title: str, what: str, files: list[str], body: str, footer: str = "") -> str:
    """A whole page: `title`, a line saying `what` it shows, from which `files`, when and by
    which version; then `body` and the `footer` (HTML)."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    sources = ", ".join(sorted({printable(f) for f in files}))
    made = f"made {stamp} by sudoku-pipeline {escape(package_version())}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{escape(title)}</title><style>{CSS}</style></head>
<body><main>
<h1>{escape(title)}</h1>
<p class="sub">{escape(what)} from {escape(sources)} · {made}</p>
{body}{footer}
</main></body></html>
"""
