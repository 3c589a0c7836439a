"""Start-up: what a small `solve` imports (issue 11: the 3,000-row sample within 0.6 s, warm),
and the command line's own conversion of plain option values, which must agree with Typer's."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from pipeline.cli import app
from pipeline.cli.help import _declared, _plain_conversions

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.csv"

# Modules a plain `solve` to Parquet has no use for, each costing 0.03-0.2 s of start-up.
NOT_NEEDED = ("pydantic", "tqdm", "multiprocessing", "polars")

RUN = """
import json, sys
from pipeline.cli import app
try:
    app(sys.argv[1:])
except SystemExit as done:
    assert not done.code, done.code
print(json.dumps(sorted(sys.modules)))
"""


def test_a_plain_solve_imports_nothing_it_does_not_use(tmp_path):
    argv = [sys.executable, "-c", RUN, "solve", str(SAMPLE), "-o", str(tmp_path / "x.parquet"),
            "-q"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert [name for name in NOT_NEEDED if name in loaded] == []


VALUES = ["0", "1", "2", "3", "007", "1_000", " 5", "+4", "-1", "1.0", "abc", "", "fast",
          "FAST", "mrv", "parquet", "local", "dask", 5, 0, 2**63, True, None, ["a"], ("a", "b"),
          "9223372036854775807", "9223372036854775808", "99999999999999999999"]  # fmt: skip


def _outcome(process_value, value, ctx):
    try:
        return "value", process_value(ctx, value)
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        message = e.format_message() if hasattr(e, "format_message") else str(e)
        return type(e).__name__, message


@pytest.mark.parametrize("name", ["solve", "validate", "generate", "report", "bench", None])
def test_plain_conversions_agree_with_typers_own(name):
    """Through click's public `process_value`, with and without the plain conversion in front
    (Typers before 0.29 convert with click's types: the plain conversion stays out of the way)."""
    group = typer.main.get_command(app)
    command = group if name is None else group.commands[name]
    ctx = group.context_class(command)
    for param in command.get_params(ctx):
        typer_own = param.process_value
        _plain_conversions([param], _declared(command.callback))
        plain = param.process_value
        vars(param).pop("process_value", None)  # the next command object is made afresh
        for value in VALUES:
            want = _outcome(typer_own, value, ctx)  # Typer's own (pydantic, in Typer 0.29)
            got = _outcome(plain, value, ctx)
            if _past_int64(want):  # Typer takes any size where no bound is declared; not here
                assert got[0] == "BadParameter" and "less than or equal to" in got[1], got
                continue
            assert got == want, (param.name, value)
            assert type(got[1]) is type(want[1]), (param.name, value)


def _past_int64(outcome: tuple) -> bool:
    kind, value = outcome
    return kind == "value" and type(value) is int and not -(2**63) <= value < 2**63
