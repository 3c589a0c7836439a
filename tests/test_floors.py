"""`make floors` reads the floors from pyproject.toml (scripts/floors.py): no second list."""

import pytest

from scripts import floors as script

PYPROJECT = """
[project]
name = "x"
dependencies = ["polars>=2.1,<3", "numba >= 0.60", "typer[all]>=0.16; python_version>='3.11'"]
[project.optional-dependencies]
report = ["matplotlib>=3.8"]
test = ["pytest>=8", "ruff>=0.6", "hypothesis>=6.100"]
"""


def test_each_direct_dependency_is_pinned_at_its_floor(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(PYPROJECT)

    assert script.floors(pyproject) == [
        "polars==2.1",
        "numba==0.60",
        "typer==0.16",
        "matplotlib==3.8",
    ]
    assert script.floors(pyproject, extras=()) == ["polars==2.1", "numba==0.60", "typer==0.16"]
    assert script.test_tools(pyproject) == ["pytest>=8", "hypothesis>=6.100"]  # no linter


def test_a_dependency_without_a_floor_is_refused(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(PYPROJECT.replace('"numba >= 0.60"', '"numba"'))

    with pytest.raises(ValueError, match="numba declares no floor"):
        script.floors(pyproject)


def test_the_projects_own_floors_are_read():
    names = [pin.split("==")[0] for pin in script.floors()]
    assert {"polars", "pyarrow", "numpy", "numba", "typer", "tqdm"} <= set(names)
