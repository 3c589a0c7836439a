"""The kernels a job calls, named once, and how each is loaded (or, on a first run, compiled)
before any clock starts: one table for every job.

    kernels = ("fast", "clash")               # what a solve with the `fast` strategy calls
    job = start_job(..., kernels=kernels)     # its workers run `warm(kernels)` as they start
    compiled_names(kernels)                   # (module, name) of each: is it cached yet?

A name is a strategy of the solver's registry (`fast`, `mrv`, `backtrack`: its kernel) or one
of the other kernels below. `warm` is a plain function of names, so that a worker process can
be handed it (pickled by reference, with its names).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from pipeline.solver.registry import REGISTRY


def _grids() -> np.ndarray:
    """Two tiny boards: an empty one (a search) and one whose givens clash."""
    grids = np.zeros((2, 81), dtype=np.uint8)
    grids[1, :2] = 1
    return grids


def _strategy(name: str) -> Callable[[], None]:
    def load() -> None:
        from pipeline.solver import solve_grids

        solve_grids(_grids(), name, max_nodes=1000)

    return load


def _clash() -> None:
    from pipeline.solver.checks import first_clash

    first_clash(_grids()[1:])


def _two_solutions() -> None:
    from pipeline.solver import find_two_solutions

    find_two_solutions(_grids(), max_nodes=1000)


def _canonical() -> None:
    from pipeline.canonical_forms import canonical_grids

    canonical_grids(_grids())


def _rating() -> None:
    from pipeline.rating import rate_grids

    rate_grids(_grids(), samples=2, max_nodes=1000)


@dataclass(frozen=True)
class Kernel:
    """A kernel a job may call: `load()` calls it once on tiny boards; `compiled` names the
    numba functions (module, name) whose cache says whether a first call compiles."""

    load: Callable[[], None]
    compiled: tuple[tuple[str, str], ...]


KERNELS: dict[str, Kernel] = {
    **{name: Kernel(_strategy(name), s.kernels()) for name, s in REGISTRY.items()},
    "clash": Kernel(_clash, (("pipeline.solver.checks", "_first_clash_kernel"),)),
    "two_solutions": Kernel(_two_solutions, (("pipeline.solver.fast", "two_solutions_kernel"),)),
    "canonical": Kernel(_canonical, (("pipeline.canonical_forms.batch", "canonical_kernel"),)),
    "rating": Kernel(
        _rating,
        (
            ("pipeline.rating.ladder", "grade_kernel"),
            ("pipeline.rating.difficulty", "symmetric_copies"),
        ),
    ),  # fmt: skip
}


def warm(names: tuple[str, ...]) -> None:
    """Load (or compile) the kernels `names`, in order."""
    for name in names:
        KERNELS[name].load()


def compiled_names(names: Iterable[str]) -> list[tuple[str, str]]:
    """(module, name) of the numba functions behind `names`, each once."""
    return list(dict.fromkeys(k for name in names for k in KERNELS[name].compiled))
