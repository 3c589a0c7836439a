"""sudoku-pipeline: solve, validate and report on Sudoku corpora in bulk.

The public Python API; the command line (`sudoku-pipeline`) is a thin layer over it.

One board (the seeds' API): `solve_sudoku`, `solve_unique`, `is_valid`, `solve`.
Many boards: `solve_batch` (in memory, a polars DataFrame in the result schema),
`generate` (seeded puzzles with unique solutions).
Files, the commands' twins: `solve_file`, `validate_file`, `generate_file` (loaded on first
use), and `pipeline.report.report`, `pipeline.bench.bench`.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from pipeline.api import SolveResult, is_valid, solve, solve_sudoku, solve_unique
from pipeline.batch import SolveOptions, solve_batch
from pipeline.generate import generate
from pipeline.solver import STRATEGIES

try:
    __version__ = version("sudoku-pipeline")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

_FILE_JOBS = {
    "solve_file": "pipeline.run",
    "validate_file": "pipeline.validate",
    "generate_file": "pipeline.generate",
}


def __getattr__(name: str) -> Any:
    """The file jobs, imported when first asked for (they bring tqdm and more)."""
    if name in _FILE_JOBS:
        return getattr(import_module(_FILE_JOBS[name]), name)
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")


__all__ = [
    "STRATEGIES",
    "SolveOptions",
    "SolveResult",
    "__version__",
    "generate",
    "generate_file",
    "is_valid",
    "solve",
    "solve_batch",
    "solve_file",
    "solve_sudoku",
    "solve_unique",
    "validate_file",
]
