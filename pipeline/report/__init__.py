"""Solver performance from result Parquet files: figures, tables, comparisons. Never re-solves.

    rep = report(["fast.parquet", "mrv.parquet"], html="report.html")
    print(render_text(rep))       # the terminal summary (`sudoku-pipeline report`)
    rep.to_dict()                 # the numbers alone (`--json`)

* `runs`: the data model (runs read from result files, their figures, comparisons);
* `text`: the tables as formatted cells and the terminal summary;
* `plots` (matplotlib) and `html`: the self-contained HTML page.
"""

from pathlib import Path

from pipeline.errors import ReportError
from pipeline.io.output import check_path
from pipeline.report.runs import Report, compare, comparison_pairs, load_runs, run_figures
from pipeline.report.text import render_text


def write_html(rep: Report, path: str | Path) -> Path:
    """One self-contained HTML file (plots embedded as PNG): nothing to fetch to view it."""
    from pipeline.report.html import render_html  # matplotlib: only for the page

    out = check_path(path, "HTML report", kind="html")
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(render_html(rep), encoding="utf-8")
    tmp.replace(out)
    return out


def report(paths: list[str | Path] | str | Path, html: str | Path | None = None) -> Report:
    """Read result files (of `solve` or `bench`) and compute every figure; with `html`, also
    write the HTML report there. Raises `ReportError` (one line) for a file it cannot read."""
    if isinstance(paths, str | Path):
        paths = [paths]
    if html is not None:
        check_path(html, "HTML report", kind="html")  # before the reading, not after
    runs = load_runs(list(paths))
    rep = Report(
        runs,
        [run_figures(r.frame) for r in runs],
        [compare(a, b) for a, b in comparison_pairs(runs)],
    )
    if html is not None:
        write_html(rep, html)
    return rep


__all__ = ["Report", "ReportError", "render_text", "report", "write_html"]
