"""Every command's `--help` example runs where an installed user runs it: in an empty folder,
on files the examples themselves make (`generate`'s corpus, `solve`'s results), never on a
file of the repository (data/, benchmarks/, tests/)."""

import re
import shlex

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from pipeline.cli import app

COMMANDS = sorted(get_command(app).commands)  # type: ignore[attr-defined]
# generate first: the others read its corpus; report reads solve's results
ORDER = [
    "generate", "augment", "solve", "enumerate", "score", "validate", "report", "bench", "split"
]  # fmt: skip
REPOSITORY = re.compile(r"\b(data|benchmarks|tests|scripts)/")


def help_text(command: str) -> str:
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0
    return result.output


def example(command: str) -> list[str]:
    line = next(line for line in help_text(command).splitlines() if "Example:" in line)
    return shlex.split(line.split("Example: sudoku-pipeline ", 1)[1])


@pytest.mark.parametrize("command", COMMANDS)
def test_no_help_names_a_file_of_the_repository(command):
    assert not REPOSITORY.search(" ".join(help_text(command).split())), command


def test_every_command_is_in_the_order_the_examples_run():
    assert sorted(ORDER) == COMMANDS


def test_the_examples_run_one_after_another_in_an_empty_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command in ORDER:
        result = CliRunner().invoke(app, example(command))
        assert result.exit_code == 0, (command, result.output)
    made = {p.name for p in tmp_path.iterdir()}
    assert made >= {"puzzles.parquet", "puzzles.solved.parquet", "puzzles.findings.csv"}
