"""Start-up: what a small `solve` imports (issue 11: the 3,000-row sample within 0.6 s, warm),
and the command line's own conversion of plain option values, which must agree with Typer's."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from pipeline.cli import app
from pipeline.cli.help import _plain_conversions

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


def _outcome(param, value, ctx):
    try:
        return "value", param.get_runtime_param().coerce(value, param=param, ctx=ctx)
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        message = e.format_message() if hasattr(e, "format_message") else str(e)
        return type(e).__name__, message


@pytest.mark.parametrize("name", ["solve", "validate", "generate", "report", "bench", None])
def test_plain_conversions_agree_with_typers_own(name):
    group = typer.main.get_command(app)
    command = group if name is None else group.commands[name]
    ctx = typer.main.get_command(app).context_class(command)
    for param in command.get_params(ctx):
        if not hasattr(param, "_runtime_param"):
            continue
        for value in VALUES:
            param._runtime_param = None
            want = _outcome(param, value, ctx)  # Typer's own (pydantic)
            param._runtime_param = None
            _plain_conversions([param])
            got = _outcome(param, value, ctx)
            assert got == want, (param.name, value)
            assert type(got[1]) is type(want[1]), (param.name, value)
