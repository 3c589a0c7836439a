"""Shared test helpers: where the public puzzle sets live (when present), read as `solve` reads
them; the command run in this process or as a real one; what a one-line error looks like."""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from pipeline.cli import app
from pipeline.io.opening import read_puzzles

# the `server` fixture (a local HTTP server of a temporary folder), for every test of URLs
pytest_plugins = ["tests.http_served"]

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
TDOKU_SKIP = "tdoku's library is not built (set TDOKU_LIB or TDOKU_BENCH)"


def shared_puzzles(name: str, limit: int | None = None) -> np.ndarray:
    """`(n, 81) uint8` puzzles from a public set in ../shared/data, or skip the test."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} not present (public sets are optional for the tests)")
    return read_puzzles(path, limit=limit).grids


# --- running the command ----------------------------------------------------------------------

_SCRIPT = Path(sys.executable).with_name("sudoku-pipeline")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "pipeline.cli"]
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc, sends signals")


def cli(*args: object) -> Result:
    """`sudoku-pipeline ARGS` in this process (Typer's CliRunner); stderr kept apart."""
    return CliRunner().invoke(app, [str(a) for a in args])


def command(*args: object, timeout: float = 120, **run: Any) -> subprocess.CompletedProcess:
    """`sudoku-pipeline ARGS` as a real process."""
    argv = [*COMMAND, *(str(a) for a in args)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **run)


def assert_one_line_error(stderr: str, *fragments: str) -> None:
    """A usage or I/O error: one line `error: ...` on stderr naming `fragments`, no traceback."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    """A 2 MiB tmpfs (root on Linux), else skip (as in test_faults.py, for other modules)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small disk needs root and mount (tmpfs)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], capture_output=True)


# --- the order of the tests --------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reverse-order",
        action="store_true",
        help="run the tests in reverse order: a test that leans on what another left behind "
        "fails (`make stress` runs every other round so)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--reverse-order"):
        items.reverse()


def live_processes(group: int) -> list[int]:
    """The processes of a process group that still run (zombies aside)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _parent, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError):
            continue
        if int(pgrp) == group and state != "Z":
            found.append(int(stat.parent.name))
    return found


# A program's prelude for the warm-up tests: `compiled_by(batch)` runs a batch after the
# warm-up and prints the numba functions it had to compile (none, when the warm-up is whole).
COMPILED_BY = """
import sys
import pyarrow as pa
from numba.core.registry import CPUDispatcher

def loaded():
    return {(module, name): len(value.overloads)
            for module, m in list(sys.modules.items()) if module.startswith("pipeline.")
            for name, value in vars(m).items() if isinstance(value, CPUDispatcher)}

def compiled_by(run_batch):
    puzzle = sys.argv[-1]
    rows = [puzzle, "11" + puzzle[2:], puzzle[:-1], "." * 81]  # good, clash, malformed, multiple
    batch = pa.record_batch({"row": pa.array(range(len(rows)), pa.int64()), "puzzle": rows})
    before = loaded()
    run_batch(batch)
    after = loaded()
    print(sorted(key for key in after if after[key] != before.get(key, 0)))
"""
