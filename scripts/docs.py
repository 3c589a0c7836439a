"""The parts of the docs that the code defines, generated from it so that they cannot drift.

    python -m scripts.docs            # rewrite the generated sections in README.md and docs/
    python -m scripts.docs --check    # exit 1 when a section is out of date (tests/test_docs.py)

Sections sit between `<!-- NAME:start -->` and `<!-- NAME:end -->` markers:
* each job's output columns, where the job table names a page for them
  (`pipeline.jobs.JOBS`: `columns`, e.g. docs/guide/score.md `scored`);
* docs/reference/findings.md `findings`: the finding codes (`pipeline.jobs.validate.catalogue`);
* docs/guide/solve.md `strategies`: the solver strategies (`pipeline.kernels.registry`);
* docs/reference/cli.md `cli`: every command's `--help`.

And one whole file: docs/index.md, the docs site's front page, is README.md with its links
into docs/ made relative (README.md's links are absolute, for the package's index page).
"""

import argparse
import re
import sys
from functools import partial
from importlib import import_module
from pathlib import Path

import pyarrow as pa

from pipeline.jobs import JOBS, JobEntry

ROOT = Path(__file__).resolve().parents[1]


def _type_name(field: pa.Field) -> str:
    from pipeline.results.schema import enum_values

    if enum_values(field) is not None:
        return "enum"
    if pa.types.is_dictionary(field.type):
        return "dictionary"
    return {"large_string": "string"}.get(str(field.type), str(field.type))


def columns_table(schema: pa.Schema, meanings: dict[str, str]) -> str:
    """An output's columns as a Markdown table: column, type, meaning."""
    lines = ["| column | type | meaning |", "|---|---|---|"]
    for field in schema:
        kind = "passthrough" if field.name == "id" else _type_name(field)
        lines.append(f"| {field.name} | {kind} | {meanings[field.name]} |")
    return "\n".join(lines) + "\n"


def job_columns(job: JobEntry) -> str:
    """A job's output columns (the function its entry in the job table names)."""
    assert job.columns is not None
    module, function = job.columns[2].split(":")
    schema, meanings = getattr(import_module(f"{job.package}.{module}"), function)()
    return columns_table(schema, meanings)


def findings_table() -> str:
    """The finding codes as a Markdown table: code, level, what it says of the row."""
    from pipeline.jobs.validate.catalogue import CATALOGUE

    lines = ["| code | level | the row ... |", "|---|---|---|"]
    lines += [f"| `{c.code}` | {c.level} | {c.description} |" for c in CATALOGUE]
    return "\n".join(lines) + "\n"


def strategies_list() -> str:
    """The solver strategies as a Markdown list."""
    from pipeline.kernels.registry import DEFAULT_STRATEGY, REGISTRY

    lines = []
    for s in REGISTRY.values():
        default = " (default)" if s.name == DEFAULT_STRATEGY else ""
        budget = (
            "no node budget"
            if s.default_budget is None
            else (f"{s.default_budget:,} nodes a puzzle by default")
        )
        lines.append(f"* `{s.name}`{default}: {s.summary} ({budget}).")
    return "\n".join(lines) + "\n"


def cli_reference() -> str:
    """Every command's `--help`, as the terminal shows it (80 columns)."""
    from typer.main import get_command
    from typer.testing import CliRunner

    from pipeline.cli import app

    runner = CliRunner()
    parts = []
    names = [None, *sorted(get_command(app).commands)]  # type: ignore[attr-defined]
    for name in names:
        args = [name, "--help"] if name else ["--help"]
        result = runner.invoke(
            app, args, prog_name="sudoku-pipeline", terminal_width=80, env={"COLUMNS": "80"}
        )
        title = f"sudoku-pipeline {name}" if name else "sudoku-pipeline"
        parts.append(f"## {title}\n\n```\n{result.output.rstrip()}\n```\n")
    return "\n".join(parts)


SECTIONS = {
    **{
        (job.columns[0], job.columns[1]): partial(job_columns, job)
        for job in JOBS.values()
        if job.columns is not None
    },
    ("docs/reference/findings.md", "findings"): findings_table,
    ("docs/guide/solve.md", "strategies"): strategies_list,
    ("docs/reference/cli.md", "cli"): cli_reference,
}

REPOSITORY = "https://github.com/sudoku-pipeline/sudoku-pipeline/blob/main/"
INDEX_NOTE = "<!-- generated from README.md by `python -m scripts.docs`: edit README.md -->\n"


def index_page() -> str:
    """README.md as the site's front page: links into docs/ relative to it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return INDEX_NOTE + text.replace(REPOSITORY + "docs/", "")


WHOLE_FILES = {"docs/index.md": index_page}


def replaced(text: str, section: str, body: str) -> str:
    """`text` with the body of `section` replaced (the markers stay)."""
    start, end = f"<!-- {section}:start -->", f"<!-- {section}:end -->"
    pattern = re.escape(start) + ".*?" + re.escape(end)
    if not re.search(pattern, text, flags=re.S):
        raise SystemExit(f"no {start} ... {end} section")
    return re.sub(pattern, lambda _: f"{start}\n{body}{end}", text, flags=re.S)


def stale() -> list[str]:
    """The sections whose text differs from what the code says."""
    out = []
    for (file, section), make in SECTIONS.items():
        text = (ROOT / file).read_text()
        if replaced(text, section, make()) != text:
            out.append(f"{file}: {section}")
    for file, make in WHOLE_FILES.items():
        path = ROOT / file
        if not path.exists() or path.read_text(encoding="utf-8") != make():
            out.append(file)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only say what is out of date")
    args = parser.parse_args()
    if args.check:
        out = stale()
        for name in out:
            print(f"out of date: {name} (run `python -m scripts.docs`)")
        sys.exit(1 if out else 0)
    for (file, section), make in SECTIONS.items():
        path = ROOT / file
        path.write_text(replaced(path.read_text(), section, make()))
    for file, make in WHOLE_FILES.items():
        (ROOT / file).write_text(make(), encoding="utf-8")
    print("docs updated")


if __name__ == "__main__":
    main()
