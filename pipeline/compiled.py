"""How the kernels are compiled, where their machine code is kept, and who is told.

Every numba function of the package is declared with one of two decorators:

    @kernel            # called from Python: nogil, cached
    @kernel_part       # called from other kernels only: the same, without the Python and C
                       # wrappers (measured: the first compile of the `fast` kernels
                       # 9.6-10.9 s with them, 8.8-8.9 s without)

**Where the cache lives.** numba keeps compiled kernels on disk, by default beside the code
(`__pycache__`), which a read-only install (a container's `USER nobody`, a shared cluster
install) cannot write, and which `pip uninstall` leaves behind. Here they go to the user's
cache folder instead: `$NUMBA_CACHE_DIR` when set (numba's own setting, honoured as numba
honours it), else `$XDG_CACHE_HOME/sudoku-pipeline` (`~/.cache/sudoku-pipeline`), one
subfolder per folder of the package (named as numba names them: the folder's name and a hash
of its path, so two copies of the package never share files). numba checks each cache entry
against a hash of its source file; here also against a digest of every file whose code a
kernel may hold (`KERNEL_SOURCES`), so an upgrade or an edit compiles again. When no such folder
can be written, the kernels compile in memory for this process only, and the notice says so.

**Who is told.** Compiling takes seconds (the first run after an install); loading from the
cache a moment. The notice comes exactly when numba starts compiling one of our kernels (its
`numba:compile` event, never a guess from files): a `CompilingWarning` by default (a notebook
shows it), or, in the command line, one line on stderr (`notices`). The estimate it gives
is the sum of the kernels the work at hand needs that are not cached yet (`expect`), from
`COMPILE_SECONDS`, measured on a 2-core machine.
"""

import hashlib
import os
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from numba import njit
from numba.core import caching, event

from pipeline.cpu import fast_pext

PACKAGE = Path(__file__).resolve().parent
_APP = "sudoku-pipeline"


class CompilingWarning(UserWarning):
    """The kernels are being compiled: a first use after an install takes seconds."""


def cache_root() -> Path | None:
    """The folder the compiled kernels go to (None: none can be written; they compile in
    memory). Chosen once per process, when the first kernel module is imported."""
    return _ROOT


def cache_folder(source: Path) -> Path | None:
    """Where numba keeps the compiled kernels of the module file `source` (numba's own
    naming: the parent folder's name and the SHA-1 of its path)."""
    if _ROOT is None:
        return None
    parent = os.path.dirname(os.path.abspath(source))
    digest = hashlib.sha1(parent.encode()).hexdigest()
    return _ROOT / f"{os.path.basename(parent)}_{digest}"


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _choose_root() -> Path | None:
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        return Path(configured) if _writable(Path(configured)) else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # the XDG rule: a relative path is to be ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / _APP
    return folder if _writable(folder) else None


_ROOT = _choose_root()


# Every file whose code a kernel may hold: the kernels' modules and what they import from the
# package (a test checks that this covers their imports). numba checks a cached kernel only
# against its own file, yet a kernel holds the code of the parts it links and the values of
# the constants it reads, from other files: after an upgrade, or an edit, that changed a
# part but not the kernel's file, the kernel would be loaded stale. So each cached kernel is
# also checked against a digest of all of these (their contents, as numba checks the
# kernel's own: a change to any of them compiles the kernels again, as a first run does).
KERNEL_SOURCES = (
    "canonical_forms/",
    "kernels/",
    "rating/",
    "compiled.py",
    "cpu.py",
    "limits.py",
    "plugins/library_batch.py",
    "plugins/library_calls.py",
    "plugins/shared.py",
    "splitmix.py",
    "symmetry_codes.py",
    "symmetry_kernels.py",
)


def kernel_sources() -> list[Path]:
    """The files of `KERNEL_SOURCES`, in a fixed order."""
    found: list[Path] = []
    for name in KERNEL_SOURCES:
        place = PACKAGE / name
        found.extend(sorted(place.glob("*.py")) if name.endswith("/") else [place])
    return found


_stamp: list[str] = []


def kernel_sources_stamp() -> str:
    """A digest of the contents of every file of `kernel_sources()`, by name (once a process,
    when the first kernel is loaded: a few milliseconds)."""
    if not _stamp:
        digest = hashlib.sha256()
        for source in kernel_sources():
            try:
                content = source.read_bytes()
            except OSError:
                content = b"(none)"
            relative = source.relative_to(PACKAGE).as_posix()
            digest.update(f"{relative} {len(content)}\n".encode() + content)
        digest.update(f"pext {fast_pext()}\n".encode())  # an instruction chosen at compile
        _stamp.append(digest.hexdigest())
    return _stamp[0]


class _PackageCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba's cache locator for this package's modules: `cache_folder` of the source file, and
    a kernel's cached code checked against its own file and `kernel_sources_stamp()`."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(cache_folder(Path(py_file)))

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> Any:
        return (super().get_source_stamp(), kernel_sources_stamp())

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        if _ROOT is None or not Path(py_file).resolve().is_relative_to(PACKAGE):
            return None  # another package's function: numba's own locators
        return super().from_function(py_func, py_file)


# Before numba's in-tree locator (the code's own `__pycache__`), after the one that honours
# NUMBA_CACHE_DIR (whose folder `_choose_root` then chose too).
# (`CacheImpl` since numba 0.61, `_CacheImpl` before)
_LOCATORS = getattr(caching, "CacheImpl", None) or caching._CacheImpl
if _PackageCacheLocator not in _LOCATORS._locator_classes:
    _LOCATORS._locator_classes.insert(1, _PackageCacheLocator)

_CACHE = _ROOT is not None
kernel = njit(nogil=True, cache=_CACHE)
kernel_part = njit(nogil=True, cache=_CACHE, no_cpython_wrapper=True, no_cfunc_wrapper=True)
inline_part = njit(nogil=True, cache=_CACHE, inline="always")  # inlined where it is called


def kernel_cached(module: str, name: str) -> bool:
    """Whether the cache holds `module`'s kernel `name`, compiled from the sources as they are
    now (an index file of it whose stamp numba will accept: after an upgrade or an edit the
    kernels are not cached, and compile side by side as on a first run)."""
    source = _source_of(module)
    if source is None:
        return False
    folder = cache_folder(source)
    if folder is None:
        return False
    return any(_current(index, source) for index in folder.glob(f"{source.stem}.{name}-*.nbi"))


def _current(index: Path, source: Path) -> bool:
    """Whether numba would take the index file `index` of a kernel of `source` (its version
    and stamp: `IndexDataCacheFile._load_index`)."""
    import pickle

    import numba

    try:
        with open(index, "rb") as file:
            if pickle.load(file) != numba.__version__:
                return False
            stamp = pickle.loads(file.read())[0]
    except Exception:  # unreadable, cut short, another numba's: numba would compile
        return False
    own = caching._SourceFileBackedLocatorMixin.get_source_stamp(_Source(str(source)))
    return bool(stamp == (own, kernel_sources_stamp()))


class _Source:
    """What numba's stamp of a source file reads of its locator."""

    def __init__(self, py_file: str) -> None:
        self._py_file = py_file


def _source_of(module: str) -> Path | None:
    """The file of `module`, found without importing it or its packages: a module of this
    package is a path below it (`find_spec` of `pipeline.rating.ladder` imports
    `pipeline.rating`, and so every kernel package: 0.3-0.4 s of every command's start-up
    went to asking whether the kernels were cached)."""
    package, _, rest = module.partition(".")
    if package == __name__.partition(".")[0] and rest:
        path = Path(__file__).parent.joinpath(*rest.split("."))  # as numba names it: unresolved
        for source in (path.with_suffix(".py"), path / "__init__.py"):
            if source.is_file():
                return source
        return None
    from importlib.util import find_spec

    spec = find_spec(module)
    return None if spec is None or spec.origin is None else Path(spec.origin)


# CPU seconds to compile each kernel alone from nothing, in a process of its own (`python -m
# benchmarks.first_run --kernels`, docs/BENCHMARKS.md): what the notice's estimate adds up and
# how the warm-up shares the kernels between its lanes (only their ratios matter there).
# Measured on a 2-core AMD EPYC, 2026-12-07 (a kernel made of parts: its own share, its parts'
# figures taken off), and given on the scale of the Intel Xeon kind, where numba compiles 1.5x
# faster. Kernels share parts, compiled once, so a sum errs long. A kernel missing here counts
# DEFAULT_SECONDS (a test checks that none is).
COMPILE_SECONDS: dict[tuple[str, str], float] = {
    # the search's two halves, compiled side by side as C callbacks (`kernels.fast_entries`)
    # with the loaders the kernels link, and each kernel that calls them beside them
    ("pipeline.kernels.fast_entries", "_propagate_entry"): 2.6,
    ("pipeline.kernels.fast_entries", "_light_entry"): 1.2,
    ("pipeline.kernels.fast_light", "choose_light"): 0.2,
    ("pipeline.kernels.fast_load", "_load_givens"): 0.2,
    ("pipeline.kernels.fast_load", "_load_candidates"): 0.2,
    ("pipeline.kernels.fast_count", "count_rectangle"): 0.2,
    ("pipeline.kernels.fast", "solve_kernel"): 1.8,  # the propagations called, not linked
    ("pipeline.kernels.reference", "reference_kernel"): 2.1,  # mrv and backtrack
    ("pipeline.kernels.checks", "_first_clash_kernel"): 0.7,
    ("pipeline.plugins.library_calls", "call_kernel"): 0.7,
    ("pipeline.plugins.library_batch", "pack_kernel"): 0.6,
    ("pipeline.plugins.library_batch", "unpack_kernel"): 0.4,
    ("pipeline.kernels.fast", "two_solutions_kernel"): 1.3,
    ("pipeline.canonical_forms.search", "search_form"): 3.1,
    ("pipeline.canonical_forms.full", "full_form"): 1.9,
    ("pipeline.canonical_forms.batch", "canonical_kernel"): 1.1,  # its search cached
    ("pipeline.canonical_forms.batch", "complete_kernel"): 0.8,  # full_form cached
    ("pipeline.rating.rungs", "_easy_rungs"): 3.5,  # C callbacks the ladder calls
    ("pipeline.rating.rungs", "_hard_rungs"): 3.5,
    ("pipeline.rating.ladder", "grade_kernel"): 1.0,  # beside its halves, on stand-ins
    ("pipeline.rating.difficulty", "symmetric_copies"): 1.9,
    ("pipeline.kernels.checks", "_verify_kernel"): 0.5,
    ("pipeline.symmetry_kernels", "augment_kernel"): 1.9,
    ("pipeline.kernels.enumeration", "enumerate_kernel"): 0.7,  # the search's parts cached
    ("pipeline.kernels.checks", "_givens_valid_kernel"): 0.3,
    # the pencilmark twins (compiled in the background, or when a row holds pencilmarks)
    ("pipeline.kernels.fast", "solve_candidates_kernel"): 1.8,
    ("pipeline.kernels.reference", "reference_candidates_kernel"): 2.1,
    ("pipeline.kernels.fast", "two_solutions_candidates_kernel"): 1.3,
}
DEFAULT_SECONDS = 3.0

GAP = 2.0  # seconds: a compile that starts this soon after the last one ended is the same work

_lock = threading.Lock()
_expected: list[tuple[str, str]] = []
_expected_seconds = 0.0
_given_up: set[tuple[str, str]] = set()  # kernels of work given up, compiling in the background
_told = False  # the work at hand was announced (reset when a compile starts after a GAP)
_last_end = -GAP
_ahead = False  # the other kernels are compiling in the background (said in the notice)
_depth = threading.local()


def _say(message: str) -> None:
    # from numba's compiler, many frames deep: no line of the caller's to point at
    warnings.warn_explicit(message, CompilingWarning, "sudoku-pipeline", 0, module="pipeline")


_notify: Callable[[str], None] = _say


def _silent(message: str) -> None:
    """A notice nobody asked for (`-q`)."""


@contextmanager
def notices(notify: Callable[[str], None] | None) -> Iterator[None]:
    """Within the block, `notify(message)` hears that kernels compile (`stderr_notice` says it
    on stderr), None silences it; outside, a `CompilingWarning` says it."""
    global _notify
    previous, _notify = _notify, notify or _silent
    try:
        yield
    except BaseException:
        with _lock:  # the work was given up (Ctrl-C): what of it goes on compiling says nothing
            _given_up.update(_expected)
        raise
    finally:
        _notify = previous


def expect(
    kernels: Iterable[tuple[str, str]], seconds: float | None = None, ahead: bool = False
) -> float:
    """The work about to start needs these kernels, (module, name): the seconds it will spend
    compiling those not cached yet (0: none), which the notice gives when compiling starts.
    `seconds`: the caller's own estimate of that, for kernels compiled side by side (the sum
    of `COMPILE_SECONDS` otherwise). `ahead`: the other kernels are compiling in the
    background meanwhile (`run.compile_ahead`), which the notice says too."""
    global _told, _expected_seconds, _ahead
    missing = [k for k in kernels if not kernel_cached(*k)]
    with _lock:
        _expected[:] = missing
        _given_up.clear()  # asked for again: heard of again
        _expected_seconds = estimate(missing) if seconds is None or not missing else seconds
        _told = False  # new work: its first compile is announced
        _ahead = ahead
    return _expected_seconds


def estimate(kernels: Iterable[tuple[str, str]]) -> float:
    return sum(COMPILE_SECONDS.get(k, DEFAULT_SECONDS) for k in kernels)


def _message(seconds: float) -> str:
    where = (
        f"then cached in {_ROOT}"
        if _ROOT is not None
        else "in memory for this process only: no cache folder can be written "
        "(set NUMBA_CACHE_DIR or XDG_CACHE_HOME to a writable folder)"
    )
    rest = "; the other commands' kernels compile in the background" if _ahead else ""
    return f"compiling the solver kernels (first use; about {seconds:.0f} s, {where}{rest})"


class _Listener(event.Listener):
    """numba's compile events for our kernels: the first compile of a piece of work (compiles
    that follow one another within `GAP` seconds) is announced, with the estimate of all of it.
    """

    def on_start(self, ev: event.Event) -> None:
        global _told
        depth = getattr(_depth, "n", 0)
        _depth.n = depth + 1
        if depth:
            return  # a kernel part compiled on behalf of a kernel
        dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        func = getattr(dispatcher, "py_func", None)
        module = getattr(func, "__module__", "") or ""
        if func is None or not module.startswith("pipeline."):
            return
        with _lock:
            if time.monotonic() - _last_end > GAP:
                _told = False
            if _told:
                return
            _told = True
            own = (module, func.__name__)
            if own in _given_up:
                return
            # the work announced: whichever of its functions compiles first (a helper of a
            # kernel, `new_scratch` of the canonical one, say, is none of those listed)
            seconds = _expected_seconds if _expected else estimate([own])
            _expected.clear()
        _notify(_message(seconds))

    def on_end(self, ev: event.Event) -> None:
        global _last_end
        _depth.n = max(getattr(_depth, "n", 1) - 1, 0)
        if _depth.n == 0:
            with _lock:
                _last_end = time.monotonic()


event.register("numba:compile", _Listener())


def stderr_notice(command: str) -> Callable[[str], None]:
    """A notice as one line on stderr, named after the `command` that waits for the kernels."""

    def notify(message: str) -> None:
        print(f"{command}: {message}", file=sys.stderr, flush=True)

    return notify
