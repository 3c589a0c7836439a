"""sudoku-pipeline: solve, validate and report on Sudoku corpora in bulk.

The public Python API; the command line (`sudoku-pipeline`) is a thin layer over it.

One board (the seeds' API): `solve_sudoku`, `solve_unique`, `is_valid`, `solve`.
Many boards: `solve_batch` (in memory, a polars DataFrame in the result schema),
`generate` (seeded puzzles with unique solutions).
"""

from importlib.metadata import PackageNotFoundError, version

from pipeline.api import SolveResult, is_valid, solve, solve_sudoku, solve_unique
from pipeline.batch import SolveOptions, solve_batch
from pipeline.generate import generate
from pipeline.solver import STRATEGIES

try:
    __version__ = version("sudoku-pipeline")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = [
    "STRATEGIES",
    "SolveOptions",
    "SolveResult",
    "__version__",
    "generate",
    "is_valid",
    "solve",
    "solve_batch",
    "solve_sudoku",
    "solve_unique",
]
