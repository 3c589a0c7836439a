"""Every Python example in the README runs, as printed, in a fresh folder holding the files
it reads (`puzzles.csv`: 200 generated puzzles with id and solution columns). The blocks run in
order in one namespace, like the cells of a notebook."""

import re
from pathlib import Path

import pytest

from pipeline import generate

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 1 and "pipeline.solve_sudoku(grid)" in BLOCKS[0]


def test_every_python_example_runs(tmp_path, monkeypatch):
    generate(200, seed=2).write_csv(tmp_path / "puzzles.csv")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for number, block in enumerate(BLOCKS, start=1):
        try:
            exec(compile(block, f"README.md python block {number}", "exec"), namespace)
        except Exception as e:  # say which block, then fail with the error itself
            pytest.fail(f"README python block {number} raised {type(e).__name__}: {e}")
    assert (tmp_path / "puzzles.solved.parquet").exists()
