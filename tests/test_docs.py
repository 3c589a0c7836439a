"""The docs say what the code does: generated sections are up to date, every command has help
with an example, and that example runs."""

import re
from pathlib import Path

import pyarrow as pa
import pytest
from typer.main import get_command
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.jobs.solve.batch import SolveOptions
from pipeline.jobs.validate.catalogue import CATALOGUE, message
from pipeline.results.schema import COLUMNS, result_schema
from scripts import docs

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = sorted(get_command(app).commands)  # type: ignore[attr-defined]


def test_generated_sections_are_up_to_date():
    assert docs.stale() == [], "run `python -m scripts.docs` to regenerate them"


def test_every_result_column_is_described():
    added = pa.unify_schemas(
        [
            SolveOptions(solver="c:lib.so:fn").added_schema(),
            SolveOptions(solutions=3, canonical=True, rate=True).added_schema(),
        ]
    )
    assert list(COLUMNS) == [f.name for f in result_schema(pa.string(), added)]


def test_every_finding_template_can_be_filled():
    fields = {"reason": "r", "where": "w", "cells": 3, "clues": 16, "budget": "10", "what": "x",
              "problems": "p", "count": 1, "givens": 20, "first_row": 4, "train_row": 5,
              "train_input": "t.csv", "train_id": "", "how": "exactly"}  # fmt: skip
    for code in CATALOGUE:
        assert message(code.code, **fields)


def test_validate_help_lists_every_finding_code_at_its_level():
    """The help names the codes by level as the catalogue has them (it is written out by hand
    so that `--help` need not import pyarrow)."""
    text = " ".join(CliRunner().invoke(app, ["validate", "--help"]).output.split())
    for level, title in (("error", "Errors"), ("warning", "Warnings"), ("info", "Info")):
        listed = re.search(rf"{title}: ([a-z_, ]+)\.", text)
        assert listed, title
        codes = {c.code for c in CATALOGUE if c.level == level}
        assert set(listed.group(1).split(", ")) == codes, level


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(command):
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0
    examples = [line.strip() for line in result.output.splitlines() if "Example:" in line]
    assert examples and examples[0].startswith(f"Example: sudoku-pipeline {command} ")


# that each example runs, anywhere: tests/test_help_examples.py


def test_one_version_in_the_metadata_the_command_and_the_changelog():
    """`sudoku-pipeline -V`, pyproject.toml's version and the changelog's newest entry agree."""
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    shown = CliRunner().invoke(app, ["-V"]).output.split()
    newest = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert shown == ["sudoku-pipeline", declared]
    assert newest and newest.group(1) == declared


def test_the_front_page_is_short_and_links_absolutely():
    """README.md is the package's long description: short, and no relative link that an index
    page would break."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= 12_500
    links = re.findall(r"\]\(([^)]+)\)", readme)
    assert links and all(link.startswith(("https://", "#")) for link in links)
