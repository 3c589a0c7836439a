"""sudoku-pipeline: solve, validate and report on Sudoku corpora in bulk.

The public Python API; the command line (`sudoku-pipeline`) is a thin layer over it.

One board: `solve_sudoku`, `solve_unique`, `is_valid`, `solve`.
Many boards in memory (a list of strings, a polars Series or DataFrame, an `(n, 81)` int
array): `solve_batch` (a DataFrame in the result schema), `validate_puzzles` (a DataFrame of
findings), `score_predictions` (a model's answers judged: a DataFrame of verdicts), all with
`workers=` to split the work over worker threads; `split` (train/val/test splits without
leaks: a dict of DataFrames and its `manifest`); `augment` (K random symmetries of every
puzzle and its solution; `restore_originals` undoes them); `enumerate_puzzles` (every
solution of each puzzle, streamed in DataFrames); `generate` (seeded
puzzles with unique solutions); `rate` and `canonical` (a rating and the canonical form of
each puzzle). A DataFrame keeps its other columns; a LazyFrame gives a LazyFrame. The polars
expression namespace `sudoku` (`pl.col("puzzle").sudoku.solve()`, `pipeline.namespace`) is
registered by `import pipeline`, or by `import polars` after it.
Files, the commands' twins: `solve_file`, `validate_file`, `score_file`, `split_file`,
`augment_file`, `enumerate_file`, `generate_file`, and
`pipeline.report.report`, `pipeline.jobs.bench.bench`.
Errors: `InputError` (a bad file, column or option; a `ValueError`), `InputNotFoundError` (also
a `FileNotFoundError`), `CheckpointError`, `ReportError`, `RunFailed`, `RunInterrupted`, all
`PipelineError`s; `InputWarning`, the warning of something a run went on through in an input
(an id that does not fit its column's type), its rows kept.

Names are loaded on first use, so `import pipeline` costs almost nothing; a type checker
(mypy, pyright) reads them from the imports under `TYPE_CHECKING`, which never run, and does
not see the module's `__getattr__`, so that a name that is not here is an error to it.
"""

import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any

from pipeline.jobs import JOBS as _JOBS  # the job table: data only, nothing imported

# public name -> the module that defines it: the jobs' from the job table, then the rest
_API = {
    "SolveResult": "pipeline.board",
    "is_valid": "pipeline.board",
    "solve": "pipeline.board",
    "solve_sudoku": "pipeline.board",
    "solve_unique": "pipeline.board",
    **{name: module for job in _JOBS.values() for name, module in job.modules().items()},
    "STRATEGIES": "pipeline.kernels.registry",
    "rate": "pipeline.namespace",
    "canonical": "pipeline.namespace",
    "GRADES": "pipeline.rating",
    "PipelineError": "pipeline.errors",
    "InputError": "pipeline.errors",
    "InputNotFoundError": "pipeline.errors",
    "InputWarning": "pipeline.errors",
    "CheckpointError": "pipeline.errors",
    "ReportError": "pipeline.errors",
    "RunFailed": "pipeline.errors",
    "RunInterrupted": "pipeline.errors",
}


# A type checker reads no table: the same names as `_API`, written out (tests/test_typing.py
# holds them together, so a job added to the table is added here too).
if TYPE_CHECKING:
    from pipeline.board import SolveResult as SolveResult
    from pipeline.board import is_valid as is_valid
    from pipeline.board import solve as solve
    from pipeline.board import solve_sudoku as solve_sudoku
    from pipeline.board import solve_unique as solve_unique
    from pipeline.errors import CheckpointError as CheckpointError
    from pipeline.errors import InputError as InputError
    from pipeline.errors import InputNotFoundError as InputNotFoundError
    from pipeline.errors import InputWarning as InputWarning
    from pipeline.errors import PipelineError as PipelineError
    from pipeline.errors import ReportError as ReportError
    from pipeline.errors import RunFailed as RunFailed
    from pipeline.errors import RunInterrupted as RunInterrupted
    from pipeline.jobs.augment.frame import augment as augment
    from pipeline.jobs.augment.frame import restore_originals as restore_originals
    from pipeline.jobs.augment.job import augment_file as augment_file
    from pipeline.jobs.enumerate.frame import enumerate_puzzles as enumerate_puzzles
    from pipeline.jobs.enumerate.job import enumerate_file as enumerate_file
    from pipeline.jobs.generate.job import generate_file as generate_file
    from pipeline.jobs.generate.puzzles import generate as generate
    from pipeline.jobs.score.frame import score_predictions as score_predictions
    from pipeline.jobs.score.job import score_file as score_file
    from pipeline.jobs.solve.batch import SolveOptions as SolveOptions
    from pipeline.jobs.solve.frame import solve_batch as solve_batch
    from pipeline.jobs.solve.job import solve_file as solve_file
    from pipeline.jobs.split.frame import split as split
    from pipeline.jobs.split.job import split_file as split_file
    from pipeline.jobs.split.manifest import SplitManifest as SplitManifest
    from pipeline.jobs.validate.frame import validate_puzzles as validate_puzzles
    from pipeline.jobs.validate.job import validate_file as validate_file
    from pipeline.kernels.registry import STRATEGIES as STRATEGIES
    from pipeline.namespace import canonical as canonical
    from pipeline.namespace import rate as rate
    from pipeline.rating import GRADES as GRADES

    __version__: str
else:  # at run time: each name imported when first asked for

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


class _SudokuNamespaceHook:
    """Registers polars' `sudoku` namespace (`pipeline.namespace`) as soon as polars is imported:
    `import pipeline` must not import polars itself (0.2-0.6 s; the command line often does
    without it). A finder on `sys.meta_path` that waits for `polars`, then runs polars' own
    loader and registers the namespace after it, once."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "polars":
            return None
        sys.meta_path.remove(self)
        from importlib.util import find_spec

        spec = find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is not None and hasattr(loader, "exec_module"):
            load = loader.exec_module

            def exec_module(module: Any) -> None:
                load(module)
                _register_namespace()

            loader.exec_module = exec_module
        return spec


def _register_namespace() -> None:
    try:
        import_module("pipeline.namespace")
    except Exception as e:  # noqa: BLE001 - never let polars' own import fail for it
        import warnings

        warnings.warn(f"the polars `sudoku` namespace is not registered: {e}", stacklevel=2)


if "polars" in sys.modules:
    _register_namespace()
else:
    sys.meta_path.insert(0, _SudokuNamespaceHook())
