"""Small habits of a well-kept command: `-V`, `python -m pipeline`, and the program's own usage
errors (no command, an unknown one, an unknown option) in one line, exit code 2, as every
subcommand's are."""

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.io.runinfo import package_version


def _program(*args: str) -> subprocess.CompletedProcess:
    """`python -m pipeline ARGS`, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True,
                          text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_has_a_short_flag(flag):
    done = CliRunner().invoke(app, [flag])

    assert done.exit_code == 0
    assert done.stdout == f"sudoku-pipeline {package_version()}\n"


def test_python_dash_m_pipeline_is_the_program():
    done = _program("-V")

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"sudoku-pipeline {package_version()}\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nosuchcommand"], "No such command 'nosuchcommand'."),
        (["solv"], "Did you mean 'solve'?"),
        ([], "Missing command, one of: solve, validate, generate, report, bench"),
        (["--nope"], "--nope"),  # click's words for it vary with its version
    ],
)
def test_the_programs_usage_errors_are_one_line_and_exit_code_2(args, says):
    done = _program(*args)

    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: ")
    assert done.stderr.endswith(" (see python -m pipeline --help)\n")
    assert done.stderr.count("\n") == 1
    assert says in done.stderr


def test_a_subcommands_usage_error_is_still_one_line():
    done = CliRunner().invoke(app, ["solve", "--nope"])

    assert done.exit_code == 2
    assert done.stderr.startswith("error: ")
    assert "--nope" in done.stderr
    assert done.stderr.count("\n") == 1
