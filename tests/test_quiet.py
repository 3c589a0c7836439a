"""`-q/--quiet` on every command that prints: no progress, no notes and no summary; stdout
holds only what was asked for (a table when it is the only output, JSON for --json), and
errors still come on stderr."""

import json

import pytest

from pipeline import generate
from tests.conftest import assert_one_line_error, cli


@pytest.fixture(scope="module")
def puzzles(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quiet")
    generate(30, seed=3).write_csv(folder / "puzzles.csv")
    return folder / "puzzles.csv"


def bench(puzzles, *args):
    return cli("bench", puzzles, "--strategy", "fast", "--repeats", 1, *args)


def test_bench_quiet_with_an_output_prints_nothing(puzzles, tmp_path):
    result = bench(puzzles, "-q", "-o", tmp_path / "b.parquet")
    assert result.exit_code == 0, result.output
    assert (result.stdout, result.stderr) == ("", "")
    assert (tmp_path / "b.parquet").exists()


def test_bench_quiet_prints_the_table_when_it_is_all_there_is(puzzles):
    result = bench(puzzles, "--quiet")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("| dataset | strategy |") and result.stderr == ""


def test_bench_quiet_json_is_printed(puzzles, tmp_path):
    result = bench(puzzles, "-q", "--json", "-o", tmp_path / "b.parquet")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) and result.stderr == ""


@pytest.fixture(scope="module")
def results(puzzles, tmp_path_factory):
    out = tmp_path_factory.mktemp("results") / "fast.parquet"
    assert cli("solve", puzzles, "-o", out, "-q").exit_code == 0
    return out


def test_report_quiet_with_html_prints_nothing(results, tmp_path):
    pytest.importorskip("matplotlib")
    page = tmp_path / "r.html"
    result = cli("report", results, "--html", page, "-q")
    assert result.exit_code == 0, result.output
    assert (result.stdout, result.stderr) == ("", "")
    assert page.exists()


def test_report_quiet_prints_the_tables_or_json_when_asked(results):
    tables = cli("report", results, "--quiet")
    assert tables.exit_code == 0 and tables.stderr == ""
    assert tables.stdout == cli("report", results).stdout
    as_json = cli("report", results, "-q", "--json")
    assert json.loads(as_json.stdout) and as_json.stderr == ""


@pytest.mark.parametrize("command", ["report", "bench"])
def test_quiet_errors_still_come(command, tmp_path):
    result = cli(command, tmp_path / "missing.parquet", "-q")
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "missing.parquet")
