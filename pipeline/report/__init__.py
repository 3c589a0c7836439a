"""Solver performance from result Parquet files: figures, tables, comparisons. Never re-solves.

    rep = report(["fast.parquet", "mrv.parquet"], html="report.html")
    print(render_text(rep))       # the terminal summary (`sudoku-pipeline report`)
    rep.to_dict()                 # the numbers alone (`--json`)

* `runs`: runs read from result files, the figures of each;
* `scores`: a model's answers (`score` files), the figures of each, two models row by row;
  `score_text`, `score_plots` and `score_html` show them;
* `compare`: runs joined by puzzle, grouped into corpora, per-puzzle ratios;
* `model`: the `Report` the renderers read;
* `text`: the tables as formatted cells and the terminal summary;
* `plots` (matplotlib, the `report` extra) and `html`: the self-contained HTML page.
"""

from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import ReportError
from pipeline.io.inputs import expand
from pipeline.io.output import check_path, is_own_result
from pipeline.io.runinfo import METADATA_KEY
from pipeline.report.metadata import read_metadata
from pipeline.report.model import Report
from pipeline.report.runs import load_runs
from pipeline.report.score_text import score_lines
from pipeline.report.scores import ScoreReport, is_score_file, load_scores
from pipeline.report.text import render_text as render_runs_text

MATPLOTLIB_HINT = "--html needs matplotlib: pip install 'sudoku-pipeline[report]'"
HTML_REPORT = "HTML report"
RESULT_FORMATS = {"parquet": "Parquet", "csv": "CSV", "jsonl": "JSON Lines"}


def render_text(rep: Report) -> str:
    """The terminal summary: the solver runs (`text.render_text`), then the score runs."""
    text = render_runs_text(rep) if rep.runs else ""
    if rep.scores is not None:
        lines = score_lines(rep.scores.to_dict())
        text = (text + "\n" if text else "") + "\n".join(lines).rstrip() + "\n"
    return text


def require_matplotlib() -> None:
    """Raise `ReportError` with the install hint when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReportError(MATPLOTLIB_HINT) from None


def _other_result(path: Path) -> str | None:
    """What `path` is when it is a result of this tool other than a page (`a Parquet result of
    sudoku-pipeline solve`), else None."""
    for kind, name in RESULT_FORMATS.items():
        if is_own_result(path, kind):
            command = None
            if kind == "parquet":
                try:
                    with open(path, "rb") as f:
                        raw = (pq.read_schema(f).metadata or {}).get(METADATA_KEY)
                    command = read_metadata(raw)[0].get("command")
                except (pa.ArrowException, OSError):
                    pass
            return f"a {name} result of sudoku-pipeline{f' {command}' if command else ''}"
    return None


def check_html(path: str | Path, inputs: Iterable[str | Path] = (), force: bool = False) -> Path:
    """The page's path, checked before any work (`check_path`: not an input, a directory or a
    device; somebody else's file only with `force`). A result of this tool that is not a page
    (a solve result) is refused as what it is, unless `force`. Raises `InputError`."""
    out = check_path(path, HTML_REPORT, inputs=inputs, force=True, kind="html")
    if not force and out.is_file() and not is_own_result(out, "html"):
        other = _other_result(out)
        if other is not None:
            raise ReportError(
                f"{out}: is {other}, not an HTML report; refused: choose another name, or use "
                "--force to replace it"
            )
        check_path(out, HTML_REPORT, inputs=inputs, force=False, kind="html")
    return out


def write_html(
    rep: Report, path: str | Path, force: bool = False, inputs: Iterable[str | Path] = ()
) -> Path:
    """One self-contained HTML file (plots embedded as PNG): nothing to fetch to view it.
    Refused over one of `inputs`, and over a file that is not a page of this tool unless
    `force` (`check_html`)."""
    require_matplotlib()
    from pipeline.report.html import render_html  # matplotlib: only for the page
    from pipeline.report.score_html import score_page, with_scores

    out = check_html(path, inputs, force)
    scores = None if rep.scores is None else rep.scores.to_dict()
    if scores is None:
        page = render_html(rep)
    else:
        page = with_scores(render_html(rep), scores) if rep.runs else score_page(scores)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return out


def report(
    paths: list[str | Path] | str | Path, html: str | Path | None = None, force: bool = False
) -> Report:
    """Read result files (of `solve`, `bench` or `score`: a score file is told by its
    metadata, `scores.is_score_file`) and compute every figure; with `html`, also
    write the HTML report there (`force`: over a file that is not a page of this tool, as
    `solve --force`). Raises `ReportError` (one line) for a file it cannot read, for `html`
    without matplotlib, or `InputError` for an `html` it will not write over."""
    paths = list(expand(paths))  # quoted globs, as every command takes them
    if html is not None:
        require_matplotlib()  # before the reading, not after
        check_html(html, paths, force)
    scored = [p for p in paths if is_score_file(p)]
    others = [p for p in paths if p not in scored]
    scores = ScoreReport.of(load_scores(scored)) if scored else None
    rep = Report.of(load_runs(others) if others or not scored else [], scores)
    if html is not None:
        write_html(rep, html, force, paths)
    return rep


__all__ = ["Report", "ReportError", "check_html", "render_text", "report", "write_html"]
