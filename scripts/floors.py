"""The declared minimum versions, tested: every direct dependency at its floor, then a smoke run.

    make floors                  # or: python -m scripts.floors [--venv .venv-floors]

The floors are read from pyproject.toml (`polars>=2.1,<3` is tested as `polars==2.1`), never
from a second list kept by hand. A separate venv (`.venv-floors`) gets those exact versions
(the `test` extra's tools beside them, held to the same pins by a constraints file, so no tool
can pull a newer numpy in), the package itself with `--no-deps`, and `pip check` (a floor that
another floor's package refuses is an error). Then the smoke tests run there: the solve,
validate, generate and report commands and the Python API. The venv is reused while the pins
are the same, and made afresh when they change. The numba kernels compile into a cache folder
of their own inside that venv, so that the main venv's cache (another numba) is not
overwritten each time.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The commands and the API, each end to end, plus the CLI's own help and conversions, and the
# Parquet footer join at the oldest pyarrow.
SMOKE = [
    "tests/test_api.py",
    "tests/test_cli_solve.py",
    "tests/test_validate.py",
    "tests/test_cli_generate.py",
    "tests/test_report.py",
    "tests/test_startup.py",
    "tests/test_cli_habits.py",
    "tests/test_parquet_concat.py",  # the footer join parses what this pyarrow writes
]
# Extras that the smoke tests need, tested at their floors too (the HTML report's plots).
EXTRAS = ("report",)
# Tools of the `test` extra that the smoke tests do not use (lint, a browser driver, the
# workers `make test` runs the suite in).
NOT_FOR_SMOKE = {"ruff", "import-linter", "selenium", "mypy", "pytest-xdist"}

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


def _name(requirement: str) -> str:
    found = _REQUIREMENT.match(requirement.split(";")[0])
    if not found:
        raise ValueError(f"cannot read the requirement {requirement!r}")
    return found.group(1).lower().replace("_", "-")


def floors(
    pyproject: Path = ROOT / "pyproject.toml", extras: tuple[str, ...] = EXTRAS
) -> list[str]:
    """`name==floor` for each direct dependency of the project (and of `extras`), its `>=`
    bound."""
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    pins = []
    for requirement in requirements:
        found = _REQUIREMENT.match(requirement.split(";")[0])
        if not found:
            raise ValueError(f"cannot read the requirement {requirement!r}")
        name, specifiers = found.group(1), found.group(3)
        low = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", specifiers)
        if low is None:
            raise ValueError(f"{name} declares no floor (>=) in pyproject.toml")
        pins.append(f"{name}=={low.group(1)}")
    return pins


def test_tools(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The `test` extra's requirements that the smoke tests use."""
    extra = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["test"]
    return [r for r in extra if _name(r) not in NOT_FOR_SMOKE]


def _run(*argv: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(a) for a in argv), flush=True)
    subprocess.run([str(a) for a in argv], check=True, cwd=ROOT, env=env)


def install(venv: Path, pins: list[str], tools: list[str]) -> Path:
    """The venv with `pins` exactly and the package without its dependencies; its python."""
    python = venv / "bin" / "python"
    stamp = venv / ".floors"
    wanted = "\n".join(pins + tools) + "\n"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        print(f"{venv.name}: the floors are installed already", flush=True)
    else:  # afresh: pip keeps what satisfies a new pin, so a reused venv would lie
        shutil.rmtree(venv, ignore_errors=True)
        _run(sys.executable, "-m", "venv", venv)
        constraints = venv / "constraints.txt"
        constraints.write_text("\n".join(pins) + "\n")
        pip = (python, "-m", "pip", "install", "-q", "--disable-pip-version-check")
        _run(*pip, "-c", constraints, *pins, *tools)
        _run(*pip, "--no-deps", "-e", ".")
        stamp.write_text(wanted)
    _run(python, "-m", "pip", "check", "--disable-pip-version-check")
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv-floors")
    parser.add_argument("pytest_args", nargs="*", help="more arguments for pytest")
    args = parser.parse_args(argv)
    pins = floors()
    print("floors:", " ".join(pins), flush=True)
    python = install(args.venv.resolve(), pins, test_tools())
    env = os.environ | {"NUMBA_CACHE_DIR": str(args.venv.resolve() / "numba-cache")}
    _run(python, "-m", "pip", "list", "--disable-pip-version-check", "--format=freeze", env=env)
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *SMOKE, *args.pytest_args],
        cwd=ROOT,
        env=env,
    )
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
