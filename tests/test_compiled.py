"""Compiled kernels: cached in the user's cache folder (never beside the code, which a read-only
install cannot write), compiled in memory when no folder can be written, and a notice exactly
when compiling happens, in the command line and from the Python API."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import COMMAND

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pipeline"
SAMPLE = ROOT / "data" / "sample.csv"


def environment(**values: str) -> dict[str, str]:
    """This process's environment without numba's and XDG's cache settings, plus `values`."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    return env | values


def index_files(folder: Path) -> set[Path]:
    return set(folder.rglob("*.nbi"))


def test_the_cache_is_the_users_and_honours_numba_cache_dir(tmp_path):
    probe = "import pipeline.compiled as c; print(c.cache_root())"
    run = [sys.executable, "-c", probe]

    xdg = subprocess.run(run, env=environment(XDG_CACHE_HOME=str(tmp_path / "xdg")),
                         capture_output=True, text=True, check=True)  # fmt: skip
    numba = subprocess.run(run, env=environment(NUMBA_CACHE_DIR=str(tmp_path / "numba")),
                           capture_output=True, text=True, check=True)  # fmt: skip
    home = subprocess.run(run, env=environment(HOME=str(tmp_path / "home")),
                          capture_output=True, text=True, check=True)  # fmt: skip

    assert xdg.stdout.strip() == str(tmp_path / "xdg" / "sudoku-pipeline")
    assert numba.stdout.strip() == str(tmp_path / "numba")
    assert home.stdout.strip() == str(tmp_path / "home" / ".cache" / "sudoku-pipeline")


def test_a_first_run_says_it_compiles_once_and_writes_nothing_beside_the_code(tmp_path):
    cache = tmp_path / "cache"
    env = environment(XDG_CACHE_HOME=str(cache))
    out = tmp_path / "out.parquet"
    beside_the_code = index_files(PACKAGE)

    first = subprocess.run([*COMMAND, "solve", SAMPLE, "-o", out], env=env,
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    second = subprocess.run([*COMMAND, "solve", SAMPLE, "-o", out], env=env,
                            capture_output=True, text=True, timeout=600)  # fmt: skip

    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    notices = [line for line in first.stderr.splitlines() if "compiling" in line]
    assert len(notices) == 1, first.stderr
    assert notices[0].startswith("solve: compiling the solver kernels (first use; about ")
    assert str(cache / "sudoku-pipeline") in notices[0]
    assert "compiling" not in second.stderr
    assert index_files(cache)
    assert index_files(PACKAGE) == beside_the_code


def read_only_copy(folder: Path) -> Path:
    """A copy of the package where nothing can be written beside the code, as in a read-only
    site-packages (even for root: each `__pycache__` is a file, so no folder can be made)."""
    site = folder / "site"
    shutil.copytree(PACKAGE, site / "pipeline", ignore=shutil.ignore_patterns("__pycache__"))
    for package in (site / "pipeline").rglob("__init__.py"):
        (package.parent / "__pycache__").write_text("")
    return site


def test_with_no_writable_folder_the_api_compiles_in_memory_and_says_so(tmp_path):
    """A read-only install with no writable home (a container's `USER nobody`): numba found
    no cache locator and every call died with `RuntimeError: cannot cache function`. Now the
    kernels compile in memory, and a warning (which a notebook shows) says so."""
    site = read_only_copy(tmp_path)
    nowhere = "/dev/null/cache"  # not a folder, not for root either
    env = environment(XDG_CACHE_HOME=nowhere, HOME=nowhere, PYTHONPATH=str(site),
                      PYTHONDONTWRITEBYTECODE="1")  # fmt: skip
    call = ("import pipeline; r = pipeline.solve_batch(['.' * 81]); "
            "print(pipeline.__file__, r['verdict'][0])")  # fmt: skip

    done = subprocess.run([sys.executable, "-c", call], env=env, capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(site / "pipeline" / "__init__.py"), "multiple"]
    assert "CompilingWarning" in done.stderr and "in memory for this process only" in done.stderr
    assert not index_files(site)


def test_quiet_says_nothing_of_compiling(tmp_path):
    """`-q`: not a word but errors, a first run's notice included (here in a folder where
    the kernels are not cached yet: a fresh one)."""
    env = environment(XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([*COMMAND, "generate", "30", "-o", tmp_path / "g.csv", "-q"], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
