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


# The minlex form's two searches, each cached on its own: a puzzle's candidate search, linked
# by the canonical kernel with these types, from its scratch arrays (`new_scratch`), in the
# lane before it; and a complete grid's, linked by the kernel of complete grids alone, which
# a batch calls only when it holds one (11 CPU s in one piece: 3.5 + 1.5 for a first command
# on puzzles, 3.8 + 1.0 when a complete grid comes).
_SOLVED = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"


def _canonical_search() -> None:
    from pipeline.canonical_forms.search import new_scratch, read_grid, search_form

    buffers, table, stacks, _, chosen = new_scratch(1024)
    grids = np.array([[int(c) for c in _SOLVED]], np.uint8)
    grids[0, ::2] = 0  # a puzzle: the candidate search
    _, barred = read_grid(grids, 0, stacks)
    search_form(np.zeros((1, 81), np.uint8), 0, buffers, table, stacks, chosen, barred)


def _canonical_full() -> None:
    """The complete grids' form (`batch.complete_kernel`): compiled ahead, or when a batch
    holds a complete grid; a first command on puzzles does not wait for it."""
    from pipeline.canonical_forms.batch import complete_kernel
    from pipeline.canonical_forms.full import full_form
    from pipeline.canonical_forms.search import new_scratch

    grid = np.array([[int(c) for c in _SOLVED]], np.uint8)
    forms = np.empty_like(grid)
    _, _, _, lines, chosen = new_scratch(1024)
    lines[0], lines[1] = grid.reshape(9, 9), grid.reshape(9, 9).T
    full_form(lines, forms[0], chosen)  # the part, with the kernel's types, then the kernel
    cells, relabel = np.empty((0, 81), np.int16), np.empty((0, 10), np.uint8)
    complete_kernel(grid, np.zeros(1, np.int64), forms, cells, relabel)


# The rating's kernels, its own only: the `fast` search its difficulty runs is a kernel of its
# own, compiled once (in another lane, or cached), never twice side by side. The ladder calls
# its techniques' two halves at their addresses (`rating.rungs`): all compile side by side.
def _rating() -> None:
    from pipeline.rating.ladder import grade_grids

    grade_grids(_grids())


def _rungs(half: str) -> Callable[[], None]:
    def load() -> None:
        from pipeline.rating.rungs import rung_entry

        rung_entry(half)  # a C callback: compiled (or loaded) by its getter

    return load


def _rating_copies() -> None:
    from pipeline.rating.difficulty import symmetric_copies

    symmetric_copies(_grids(), False, 0, 2, np.empty((4, 81), np.uint8))


def _pencilmarks() -> None:
    """The twins of the kernels for pencilmark puzzles (729-character rows): compiled when a
    row holds one, in the background ahead of that."""
    from pipeline.kernels import find_two_solutions, solve_grids
    from pipeline.rating.difficulty import symmetric_copies
    from pipeline.rating.ladder import grade_grids

    marks = np.full((1, 81), 0x1FF, np.uint16)
    for strategy in ("fast", "mrv"):
        solve_grids(None, strategy, max_nodes=1000, candidates=marks)
    find_two_solutions(None, max_nodes=1000, candidates=marks)
    grade_grids(None, candidates=marks)
    symmetric_copies(marks, True, 0, 2, np.empty((2, 81), np.uint16))


def _library() -> None:
    from pipeline.plugins.library_calls import warm_kernel

    warm_kernel()  # compiled here, if it must be: the solver's keeper then loads it cached


def _verify() -> None:
    from pipeline.kernels.checks import givens_valid, verify_solutions

    verify_solutions(_grids()[:1], _grids()[:1])
    givens_valid(_grids())  # a prediction's or answer's rules, checked alike


def _augment() -> None:
    from pipeline.symmetry_kernels import augment_grids

    augment_grids(_grids()[:1], _grids()[:1], np.zeros(1, np.int64), 0, 2, keep_original=True)


def _enumerate() -> None:
    from pipeline.kernels.enumeration import enumerate_batch

    list(enumerate_batch(_grids(), 3))


# The search's two halves, each cached on its own, compiled side by side: the full
# propagation, and the light one with the loaders and the rectangle count. The kernels that
# search (`fast`, `two_solutions`, the pencilmark twins, `enumerate`) call the propagations
# at their addresses (`kernels.fast_calls`), so they compile beside the full one, after the
# light lane's loaders they link. The loaders are compiled with the argument types those
# kernels call them with (a part compiled for other types, a literal `0` say, would be
# compiled again, in series). Each entry: (module, function, the argument types), or for a C
# callback of ENTRIES (module, function, the getter that compiles or loads it).
_BOARD = "int64[::1]"
ENTRIES = "pipeline.kernels.fast_entries"  # the propagations' C callbacks: (module, name)
FAST_PARTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "fast_propagate": ((ENTRIES, "_propagate_entry", "propagate_entry"),),
    "fast_light": (
        (ENTRIES, "_light_entry", "light_entry"),
        ("pipeline.kernels.fast_light", "choose_light", f"({_BOARD}, {_BOARD})"),
        ("pipeline.kernels.fast_load", "_load_givens", f"(uint8[::1], {_BOARD}, {_BOARD})"),
        (
            "pipeline.kernels.fast_load",
            "_load_candidates",
            f"(uint16[::1], {_BOARD}, {_BOARD}, uint8[::1])",
        ),
        ("pipeline.kernels.fast_count", "count_rectangle", f"({_BOARD},)"),
    ),
}


def _compile_parts(name: str) -> Callable[[], None]:
    def load() -> None:
        from importlib import import_module

        from numba.core import sigutils

        for module, function, signature in FAST_PARTS[name]:
            if module == ENTRIES:  # a C callback, compiled (or loaded) by its getter
                getattr(import_module(module), signature)()
                continue
            part = getattr(import_module(module), function)
            part.compile(sigutils.normalize_signature(signature)[0])

    return load


@dataclass(frozen=True)
class Kernel:
    """A kernel a job may call: `load()` calls it once on tiny boards; `compiled` names the
    numba functions (module, name) whose cache says whether a first call compiles. `parts`:
    kernels of this table whose cached code it links (numba loads a callee from the cache
    and compiles only the caller): they compile first, side by side, and this one after them
    (the rating: its techniques in two halves and its copies beside the `fast` kernel, then
    the ladder that calls them)."""

    load: Callable[[], None]
    compiled: tuple[tuple[str, str], ...]
    parts: tuple[str, ...] = ()
    links: tuple[str, ...] | None = None  # the parts its code links (None: all of them)

    def linked(self) -> tuple[str, ...]:
        """The parts that must be compiled before it (the others are needed beside it)."""
        return self.parts if self.links is None else self.links


SEARCH_PARTS = tuple(FAST_PARTS)  # the parts of every kernel of the `fast` search
LINKED = ("fast_light",)  # those its kernels link (the loaders); the other is called beside


def _search(load: Callable[[], None], compiled: tuple[tuple[str, str], ...]) -> Kernel:
    """A kernel of the `fast` search: its parts beside it, the loaders' lane before it."""
    return Kernel(load, compiled, SEARCH_PARTS, LINKED)


KERNELS: dict[str, Kernel] = {
    **{
        name: _search(_strategy(name), s.kernels())
        if s.entries
        else Kernel(_strategy(name), s.kernels())
        for name, s in REGISTRY.items()
    },
    **{
        name: Kernel(_compile_parts(name), tuple((m, f) for m, f, _ in parts))
        for name, parts in FAST_PARTS.items()
    },
    "clash": Kernel(_clash, (("pipeline.kernels.checks", "_first_clash_kernel"),)),
    "two_solutions": _search(_two_solutions, (("pipeline.kernels.fast", "two_solutions_kernel"),)),
    "library": Kernel(  # c: solvers (loaded here, then in their keeper, from the cache)
        _library,
        (
            ("pipeline.plugins.library_calls", "call_kernel"),
            ("pipeline.plugins.library_batch", "pack_kernel"),
            ("pipeline.plugins.library_batch", "unpack_kernel"),
        ),
    ),
    "verify": Kernel(
        _verify,
        (
            ("pipeline.kernels.checks", "_verify_kernel"),
            ("pipeline.kernels.checks", "_givens_valid_kernel"),
        ),
    ),
    "augment": Kernel(_augment, (("pipeline.symmetry_kernels", "augment_kernel"),)),
    "enumerate": _search(_enumerate, (("pipeline.kernels.enumeration", "enumerate_kernel"),)),
    "canonical_search": Kernel(
        _canonical_search, (("pipeline.canonical_forms.search", "search_form"),)
    ),
    "canonical_full": Kernel(
        _canonical_full,
        (
            ("pipeline.canonical_forms.full", "full_form"),
            ("pipeline.canonical_forms.batch", "complete_kernel"),
        ),
    ),
    "canonical": Kernel(
        _canonical,
        (("pipeline.canonical_forms.batch", "canonical_kernel"),),
        parts=("canonical_search",),
    ),
    "rating_easy": Kernel(_rungs("easy_rungs"), (("pipeline.rating.rungs", "_easy_rungs"),)),
    "rating_hard": Kernel(_rungs("hard_rungs"), (("pipeline.rating.rungs", "_hard_rungs"),)),
    "rating_copies": Kernel(_rating_copies, (("pipeline.rating.difficulty", "symmetric_copies"),)),
    "rating": Kernel(
        _rating,
        (("pipeline.rating.ladder", "grade_kernel"),),
        parts=("rating_easy", "rating_hard", "rating_copies", "fast"),  # fast: its difficulty
        links=(),  # its halves, the copies and `fast` are called beside it, never linked
    ),
    "pencilmarks": _search(
        _pencilmarks,
        (
            ("pipeline.kernels.fast", "solve_candidates_kernel"),
            ("pipeline.kernels.reference", "reference_candidates_kernel"),
            ("pipeline.kernels.fast", "two_solutions_candidates_kernel"),
        ),
    ),
}


def warm(names: tuple[str, ...]) -> None:
    """Load the kernels `names`. Those not cached yet (a first run) compile side by side, one
    lane of `lanes(names)` here and each other in a process of its own (numba's compiler holds
    the GIL: threads would take turns), which leaves them in the cache; then all load here,
    those made of parts after their parts."""
    from pipeline.kernels.callbacks import compiling_only

    here, *apart = lanes(names)
    helpers = [_compile_apart(lane) for lane in apart]
    try:
        with compiling_only():  # the search's kernels need not wait for its propagation
            for name in here:
                KERNELS[name].load()
    finally:
        for helper in helpers:
            helper.wait()  # a helper that failed leaves its kernels to the loop below
    for name in with_parts(names):
        KERNELS[name].load()


def with_parts(names: Iterable[str]) -> list[str]:
    """`names` with the parts of each before it (`Kernel.parts`, and theirs), each once."""
    return list(dict.fromkeys(p for n in names for p in (*with_parts(KERNELS[n].parts), n)))


def lanes(names: Iterable[str]) -> list[list[str]]:
    """The kernels of `names` not cached yet, spread over as many lanes as there are cores
    (longest compile first, each onto the lane with the least seconds so far); one lane in a
    worker process (its pool's other processes are the other lanes) or without a cache folder
    (a kernel compiled elsewhere could not be loaded here).

    A kernel made of parts either compiles in a lane right after the parts it links (one
    unit: the canonical kernel after its two searches, while the other lane compiles the
    solver's: a first `split` 11.5 -> 9.6 s, 2-core Intel Xeon, `python -m
    benchmarks.first_run`), or, its parts spread over the lanes, once all lanes are done
    (`warm`): whichever the estimates say ends sooner (the rating alone is sooner spread)."""
    from pipeline.compiled import cache_root, kernel_cached

    asked = with_parts(names)
    whole = [n for n in asked if not KERNELS[n].parts]  # those made of parts: below
    by_compiled = {KERNELS[n].compiled: n for n in reversed(whole)}  # mrv, backtrack: one
    missing = [
        n
        for n in reversed(by_compiled.values())
        if not all(kernel_cached(*k) for k in KERNELS[n].compiled)
    ]
    count = 1 if cache_root() is None or _in_worker_process() else _cores()
    spread = _spread([[n] for n in missing], count)
    after = [n for n in asked if KERNELS[n].parts and n in _missing((n,))]
    units = [[n] for n in missing]
    for name in after:  # each with the parts it links, in one unit
        linked = set(KERNELS[name].linked())
        homes = [u for u in units if set(u) & linked]
        units = [u for u in units if u not in homes] + [[*sum(homes, []), name]]
    together = _spread(units, count)
    if _finish(together) <= _finish(spread) + sum(map(_seconds, after)):
        plan = together
    else:
        plan = spread
    here, *apart = sorted(plan, key=lambda lane: -sum(map(_seconds, lane)))  # the longest here
    for lane in [lane for lane in apart if sum(map(_seconds, lane)) < START_SECONDS]:
        apart.remove(lane)  # sooner compiled here than a process started for it
        here.extend(lane)
    return [here, *apart]


def _spread(units: list[list[str]], count: int) -> list[list[str]]:
    """`units` (kernels compiled in turn) over at most `count` lanes: longest first, each onto
    the lane with the least seconds so far."""
    plan: list[list[str]] = [[] for _ in range(max(min(count, len(units)), 1))]
    seconds = [0.0] * len(plan)
    for unit in sorted(units, key=lambda u: sum(map(_seconds, u)), reverse=True):
        lane = seconds.index(min(seconds))
        plan[lane].extend(unit)
        seconds[lane] += sum(map(_seconds, unit))
    return plan


def _finish(plan: list[list[str]]) -> float:
    return max((sum(map(_seconds, lane)) for lane in plan), default=0.0)


START_SECONDS = 1.0  # a process of its own starts (numpy, numba, the package) in about this


def expect_kernels(names: Iterable[str]) -> float:
    """`pipeline.compiled.expect` for the kernels `names` as `warm` compiles them: the notice's
    estimate is the longest lane's. From the command line, the kernels of every other
    command start compiling in the background meanwhile (`on_expect`)."""
    from pipeline.compiled import expect

    names = tuple(names)
    plan = lanes(names)
    placed = {n for lane in plan for n in lane}
    last = [n for n in with_parts(names) if KERNELS[n].parts and n in _missing(names) - placed]
    longest = max(sum(map(_seconds, lane)) for lane in plan) + sum(map(_seconds, last))
    ahead = bool(on_expect(names)) if on_expect is not None else False
    return expect(compiled_names(with_parts(names)), longest, ahead)


# Told the kernels of each piece of work `expect_kernels` hears of (and returns whether the
# other kernels now compile in the background): the command line's `compile_ahead.enable()`
# sets it, so that its first command compiles the other commands' kernels.
on_expect: Callable[[tuple[str, ...]], bool] | None = None


def _missing(names: Iterable[str]) -> set[str]:
    from pipeline.compiled import kernel_cached

    return {n for n in with_parts(names) if not all(kernel_cached(*k) for k in KERNELS[n].compiled)}


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
from pipeline.kernels.callbacks import compiling_only
from pipeline.run.warmup import KERNELS
with compiling_only():
    for name in sys.argv[1:]:
        KERNELS[name].load()
"""


def _compile_apart(names: list[str]) -> subprocess.Popen:
    """A process that compiles `names` into the cache: this copy of the package (first on its
    path), quiet (its notices and a Ctrl-C's traceback are the parent's to give)."""
    package_parent = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-c", _HELPER, *names],
        env={**os.environ, "PYTHONPATH": path},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def compiled_names(names: Iterable[str]) -> list[tuple[str, str]]:
    """(module, name) of the numba functions behind `names`, each once."""
    return list(dict.fromkeys(k for name in names for k in KERNELS[name].compiled))
