"""The kernels a job calls, named once, and how each is loaded (or, on a first run, compiled)
before any clock starts: one table for every job.

    kernels = ("fast", "clash")               # what a solve with the `fast` strategy calls
    job = start_job(..., kernels=kernels)     # its workers run `warm(kernels)` as they start
    compiled_names(kernels)                   # (module, name) of each: is it cached yet?

A name is a strategy of the solver's registry (`fast`, `mrv`, `backtrack`: its kernel) or one
of the other kernels below. `warm` is a plain function of names, so that a worker process can
be handed it (pickled by reference, with its names).
"""

import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.kernels.registry import REGISTRY


def _grids() -> np.ndarray:
    """Two tiny boards: an empty one (a search) and one whose givens clash."""
    grids = np.zeros((2, 81), dtype=np.uint8)
    grids[1, :2] = 1
    return grids


def _strategy(name: str) -> Callable[[], None]:
    def load() -> None:
        from pipeline.kernels import solve_grids

        solve_grids(_grids(), name, max_nodes=1000)

    return load


def _clash() -> None:
    from pipeline.kernels.checks import first_clash

    first_clash(_grids()[1:])


def _two_solutions() -> None:
    from pipeline.kernels import find_two_solutions

    find_two_solutions(_grids(), max_nodes=1000)


def _canonical() -> None:
    from pipeline.canonical_forms import canonical_grids

    canonical_grids(_grids())


def _rating() -> None:
    from pipeline.rating import rate_grids

    rate_grids(_grids(), samples=2, max_nodes=1000)


def _library() -> None:
    from pipeline.plugins.library import call_kernel

    n = np.zeros(1, dtype=np.int64)
    call_kernel(
        0, _grids()[:1], np.ones(1, np.bool_), 2, True, n, np.zeros((1, 81), np.uint8), n, n
    )


def _verify() -> None:
    from pipeline.kernels.checks import verify_solutions

    verify_solutions(_grids()[:1], _grids()[:1])


def _augment() -> None:
    from pipeline.symmetry_kernels import augment_grids

    augment_grids(_grids()[:1], _grids()[:1], np.zeros(1, np.int64), 0, 2, keep_original=True)


def _enumerate() -> None:
    from pipeline.kernels.enumeration import enumerate_batch

    list(enumerate_batch(_grids(), 3))


@dataclass(frozen=True)
class Kernel:
    """A kernel a job may call: `load()` calls it once on tiny boards; `compiled` names the
    numba functions (module, name) whose cache says whether a first call compiles."""

    load: Callable[[], None]
    compiled: tuple[tuple[str, str], ...]


KERNELS: dict[str, Kernel] = {
    **{name: Kernel(_strategy(name), s.kernels()) for name, s in REGISTRY.items()},
    "clash": Kernel(_clash, (("pipeline.kernels.checks", "_first_clash_kernel"),)),
    "two_solutions": Kernel(_two_solutions, (("pipeline.kernels.fast", "two_solutions_kernel"),)),
    "library": Kernel(_library, (("pipeline.plugins.library", "call_kernel"),)),  # c: solvers
    "verify": Kernel(_verify, (("pipeline.kernels.checks", "_verify_kernel"),)),
    "augment": Kernel(_augment, (("pipeline.symmetry_kernels", "augment_kernel"),)),
    "enumerate": Kernel(_enumerate, (("pipeline.kernels.enumeration", "enumerate_kernel"),)),
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
    """Load the kernels `names`. Those not cached yet (a first run) compile side by side, one
    lane of `lanes(names)` here and each other in a process of its own (numba's compiler holds
    the GIL: threads would take turns), which leaves them in the cache; then all load here."""
    here, *apart = lanes(names)
    helpers = [_compile_apart(lane) for lane in apart]
    try:
        for name in here:
            KERNELS[name].load()
    finally:
        for helper in helpers:
            helper.wait()  # a helper that failed leaves its kernels to the loop below
    for name in names:
        KERNELS[name].load()


def lanes(names: Iterable[str]) -> list[list[str]]:
    """The kernels of `names` not cached yet, spread over as many lanes as there are cores
    (longest compile first, each onto the lane with the least seconds so far); one lane in a
    worker process (its pool's other processes are the other lanes) or without a cache folder
    (a kernel compiled elsewhere could not be loaded here)."""
    from pipeline.compiled import cache_root, kernel_cached

    by_compiled = {KERNELS[n].compiled: n for n in reversed(list(names))}  # mrv, backtrack: one
    missing = [n for n in reversed(by_compiled.values())
               if not all(kernel_cached(*k) for k in KERNELS[n].compiled)]  # fmt: skip
    count = 1 if cache_root() is None or _in_worker_process() else _cores()
    plan: list[list[str]] = [[] for _ in range(max(min(count, len(missing)), 1))]
    seconds = [0.0] * len(plan)
    for name in sorted(missing, key=_seconds, reverse=True):
        lane = seconds.index(min(seconds))
        plan[lane].append(name)
        seconds[lane] += _seconds(name)
    here, *apart = sorted(plan, key=lambda lane: -sum(map(_seconds, lane)))  # the longest here
    for lane in [lane for lane in apart if sum(map(_seconds, lane)) < START_SECONDS]:
        apart.remove(lane)  # sooner compiled here than a process started for it
        here.extend(lane)
    return [here, *apart]


START_SECONDS = 1.0  # a process of its own starts (numpy, numba, the package) in about this


def expect_kernels(names: Iterable[str]) -> float:
    """`pipeline.compiled.expect` for the kernels `names` as `warm` compiles them: the notice's
    estimate is the longest lane's."""
    from pipeline.compiled import expect

    plan = lanes(names)
    return expect(compiled_names(names), max(sum(map(_seconds, lane)) for lane in plan))


def _seconds(name: str) -> float:
    from pipeline.compiled import estimate

    return estimate(KERNELS[name].compiled)


def _in_worker_process() -> bool:
    """A process spawned by multiprocessing (which it has imported: a plain run need not)."""
    multiprocessing = sys.modules.get("multiprocessing")
    return multiprocessing is not None and multiprocessing.parent_process() is not None


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# A helper process: compiles its kernels into the cache, and ends when its parent does (a
# Ctrl-C or SIGTERM of the run leaves no process behind).
_HELPER = """
import os, sys, threading, time
parent = os.getppid()
def orphaned():
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)
threading.Thread(target=orphaned, daemon=True).start()
from pipeline.run.warmup import KERNELS
for name in sys.argv[1:]:
    KERNELS[name].load()
"""


def _compile_apart(names: list[str]) -> subprocess.Popen:
    """A process that compiles `names` into the cache: this copy of the package (first on its
    path), quiet (its notices and a Ctrl-C's traceback are the parent's to give)."""
    package_parent = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-c", _HELPER, *names],
                            env={**os.environ, "PYTHONPATH": path}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def compiled_names(names: Iterable[str]) -> list[tuple[str, str]]:
    """(module, name) of the numba functions behind `names`, each once."""
    return list(dict.fromkeys(k for name in names for k in KERNELS[name].compiled))
