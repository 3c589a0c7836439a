"""sudoku-pipeline: solve, validate and report on Sudoku corpora in bulk.

The public Python API; the command line (`sudoku-pipeline`) is a thin layer over it.

One board: `solve_sudoku`, `solve_unique`, `is_valid`, `solve`.
Many boards in memory (a list of strings, a polars Series or DataFrame, an `(n, 81)` int
array): `solve_batch` (a DataFrame in the result schema), `validate_puzzles` (a DataFrame of
findings), both with `workers=` to split the work over worker threads; `generate` (seeded
puzzles with unique solutions); `rate` and `canonical` (a rating and the canonical form of
each puzzle).
Files, the commands' twins: `solve_file`, `validate_file`, `generate_file`, and
`pipeline.report.report`, `pipeline.bench.bench`.
Errors: `InputError` (a bad file, column or option; a `ValueError`), `InputNotFoundError` (also
a `FileNotFoundError`), `CheckpointError`, `ReportError`, `RunFailed`, `RunInterrupted`, all
`PipelineError`s.

Names are loaded on first use, so `import pipeline` costs almost nothing.
"""

from importlib import import_module
from typing import Any

# public name -> the module that defines it
_API = {
    "SolveResult": "pipeline.board",
    "is_valid": "pipeline.board",
    "solve": "pipeline.board",
    "solve_sudoku": "pipeline.board",
    "solve_unique": "pipeline.board",
    "SolveOptions": "pipeline.solving.batch",
    "solve_batch": "pipeline.solving.inmemory",
    "generate": "pipeline.generator",
    "generate_file": "pipeline.generator",
    "solve_file": "pipeline.solving.job",
    "validate_file": "pipeline.validate.job",
    "validate_puzzles": "pipeline.validate.inmemory",
    "STRATEGIES": "pipeline.solver.registry",
    "rate": "pipeline.rating",
    "canonical": "pipeline.canonical_forms",
    "GRADES": "pipeline.rating",
    "PipelineError": "pipeline.errors",
    "InputError": "pipeline.errors",
    "InputNotFoundError": "pipeline.errors",
    "CheckpointError": "pipeline.errors",
    "ReportError": "pipeline.errors",
    "RunFailed": "pipeline.errors",
    "RunInterrupted": "pipeline.errors",
}


def __getattr__(name: str) -> Any:
    """The public API, imported when first asked for."""
    if name == "__version__":
        from pipeline.io.runinfo import package_version

        return package_version()
    if name in _API:
        value = getattr(import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API, "__version__"])


__all__ = sorted([*_API, "__version__"])
