"""Fault injection, options at their numeric edges: every whole-number option of every command,
given a number past what it can take (past int64 either way, past its own bounds), is one line
`error: ...` and exit code 2, never a traceback; numbers inside int64 that ask for more than a
run can hold (copies, samples, workers) are refused in one line before any work; and a
required option says so in `--help`."""

from pathlib import Path

import click
import pytest
import typer.main

import pipeline
from pipeline import generate
from pipeline.cli import app
from pipeline.cli.help import _declared
from tests.conftest import assert_one_line_error, cli

PAST_INT64 = "99999999999999999999999"
INT64_MAX = str(2**63 - 1)


def _int_options() -> list[tuple[str, str]]:
    """(command, option) for every whole-number option and argument of the program."""
    group = typer.main.get_command(app)
    ctx = click.Context(group)
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        declared = _declared(command.callback)
        for param in command.params:
            if param.name in declared and declared[param.name].annotation is int:
                found.append((name, param.opts[0]))
    return found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("edges") / "corpus.csv"
    generate(4, seed=5).write_csv(path)
    return path


def _argv(command: str, option: str, value: str, corpus: Path, out: Path) -> list[object]:
    """The command with `option` set to `value` and whatever else it needs to start."""
    needs = {"enumerate": ["--limit", "2"], "score": ["--prediction-column", "solution"]}
    if command == "generate":
        given = [value] if option == "n" else ["3", option, value]
        return ["generate", *given, "-o", out / "g.csv", "-q"]
    rest = [] if option == "--limit" else needs.get(command, [])
    target = out / ("split" if command == "split" else "o.parquet")
    output = [] if command in ("report", "bench", "validate", "score") else ["-o", target]
    return [command, corpus, *output, *rest, option, value, "-q"]


@pytest.mark.parametrize(("command", "option"), _int_options())
@pytest.mark.parametrize("value", [PAST_INT64, "-" + PAST_INT64])
def test_a_number_past_int64_is_one_line_for_every_option(
    command: str, option: str, value: str, corpus: Path, tmp_path: Path
) -> None:
    result = cli(*_argv(command, option, value, corpus, tmp_path))
    assert result.exit_code == 2, (result.stdout, result.stderr)
    if option.startswith("-"):
        assert_one_line_error(result.stderr, "Invalid value", "--help")
    else:  # a negative argument reads as an option: click says there is none so named
        assert_one_line_error(result.stderr, "--help")


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "{corpus}", "-o", "{out}/s.parquet", "--rate", "--rate-samples", INT64_MAX],
        ["score", "{corpus}", "--prediction-column", "solution", "--rate", "--rate-samples",
         INT64_MAX],
        ["augment", "{corpus}", "-o", "{out}/a.parquet", "--copies", INT64_MAX],
        ["split", "{corpus}", "-o", "{out}/hrm", "--format", "hrm", "--augment", INT64_MAX,
         "--subsample", "1"],
        ["solve", "{corpus}", "-o", "{out}/w.parquet", "--workers", INT64_MAX],
        ["bench", "{corpus}", "--repeats", "1", "--workers", INT64_MAX],
        ["generate", "3", "-o", "{out}/g.csv", "--workers", INT64_MAX],
        ["validate", "{corpus}", "-o", "{out}/v.parquet", "--workers", INT64_MAX],
    ],
    ids=["rate-samples", "score-rate-samples", "copies", "split-augment", "solve-workers",
         "bench-workers", "generate-workers", "validate-workers"],
)  # fmt: skip
def test_a_number_no_run_can_hold_is_refused_in_one_line_before_work(
    argv: list[str], corpus: Path, tmp_path: Path
) -> None:
    filled = [a.format(corpus=corpus, out=tmp_path) for a in argv]
    result = cli(*filled, "-q")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert_one_line_error(result.stderr)
    assert "Traceback" not in result.stderr
    assert not [p for p in tmp_path.iterdir() if p.name != "corpus.csv"]  # nothing written


def test_enumerate_help_says_limit_is_required() -> None:
    result = cli("enumerate", "--help")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("--limit"))
    assert "required" in " ".join(lines[at : at + 3])


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda p: pipeline.solve_file(p, "-", solutions=10**23), "solutions must be between"),
        (lambda p: pipeline.solve_file(p, "-", rate=True, rate_samples=2**63 - 1),
         "rate_samples must be at most"),
        (lambda p: pipeline.score_file(p, "-", prediction_column="solution", rate=True,
                                       rate_samples=2**40), "rate_samples must be between"),
        (lambda p: pipeline.augment_file(p, "-", copies=2**63 - 1), "copies must be"),
        (lambda p: pipeline.augment(pipeline.generate(2, seed=1), copies=10**6), "copies must be"),
        (lambda p: pipeline.solve_file(p, "-", workers=2**63 - 1), "workers must be between"),
        (lambda p: pipeline.solve_batch(["." * 81] * 5000, workers=2**40), "workers must be"),
    ],
    ids=["solutions", "rate-samples", "score-rate-samples", "copies", "augment-frame",
         "workers", "solve-batch-workers"],
)  # fmt: skip
def test_the_api_refuses_the_same_numbers_with_one_sentence(call, said, corpus: Path) -> None:
    with pytest.raises(ValueError, match=said) as raised:
        call(corpus)
    assert "\n" not in str(raised.value)
