"""Solver performance from result Parquet files: figures, tables, comparisons. Never re-solves.

    rep = report(["fast.parquet", "mrv.parquet"], html="report.html")
    print(render_text(rep))       # the terminal summary (`sudoku-pipeline report`)
    rep.to_dict()                 # the numbers alone (`--json`)

* `runs`: runs read from result files, the figures of each;
* `compare`: runs joined by puzzle, grouped into corpora, per-puzzle ratios;
* `model`: the `Report` the renderers read;
* `text`: the tables as formatted cells and the terminal summary;
* `plots` (matplotlib, the `report` extra) and `html`: the self-contained HTML page.
"""

from pathlib import Path

from pipeline.errors import ReportError
from pipeline.io.output import check_path
from pipeline.report.model import Report
from pipeline.report.runs import load_runs
from pipeline.report.text import render_text

MATPLOTLIB_HINT = "--html needs matplotlib: pip install 'sudoku-pipeline[report]'"


def require_matplotlib() -> None:
    """Raise `ReportError` with the install hint when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReportError(MATPLOTLIB_HINT) from None


def write_html(rep: Report, path: str | Path) -> Path:
    """One self-contained HTML file (plots embedded as PNG): nothing to fetch to view it."""
    require_matplotlib()
    from pipeline.report.html import render_html  # matplotlib: only for the page

    out = check_path(path, "HTML report", kind="html")
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(render_html(rep), encoding="utf-8")
    tmp.replace(out)
    return out


def report(paths: list[str | Path] | str | Path, html: str | Path | None = None) -> Report:
    """Read result files (of `solve` or `bench`) and compute every figure; with `html`, also
    write the HTML report there. Raises `ReportError` (one line) for a file it cannot read,
    or for `html` without matplotlib."""
    if isinstance(paths, str | Path):
        paths = [paths]
    if html is not None:
        require_matplotlib()  # before the reading, not after
        check_path(html, "HTML report", kind="html")
    rep = Report.of(load_runs(list(paths)))
    if html is not None:
        write_html(rep, html)
    return rep


__all__ = ["Report", "ReportError", "render_text", "report", "write_html"]
