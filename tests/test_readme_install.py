"""The README starts as a user meets the tool: installing the package (pip, pipx, the extras
pyproject declares), before the repository's own two commands."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_install_comes_first_then_the_two_repository_commands():
    headings = re.findall(r"^## (.+)$", README, re.M)
    assert headings[0] == "Install"
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "pip install sudoku-pipeline" in install and "pipx install sudoku-pipeline" in install
    assert README.index("make run") > README.index("pipx install sudoku-pipeline")


def test_every_user_extra_is_shown():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    for extra in ("report", "dask", "remote"):
        assert extra in extras and f"sudoku-pipeline[{extra}]" in install
