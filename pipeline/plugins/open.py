"""The adapter of a solver spec: each thread has one of its own, opened on first use, and
hands it back to a pool when the thread ends, for the next thread that asks.

A worker (a thread, or a worker process's thread) opens each solver it is asked for once and
keeps it for every batch: a `c:` or `python:` solver's process, or a `cmd:` program, is not
shared between threads (its pipes carry one request at a time). When the thread ends (a job's
worker threads, a warm-up thread), its adapters go back to the pool (`_Lease`), so that the
next job's threads take them instead of starting the solver again: a run opens as many as it
has threads at once, not one per thread it ever started. `open_solver` lends one for a look
(its description) and gives it back at once. Adapters are closed at exit (`atexit`), in the
order they were opened. Adapters are found by module name and imported on first use, so
asking for one kind never imports the others.
"""

import atexit
import threading
import weakref
from importlib import import_module
from typing import Any

from pipeline.errors import InputError
from pipeline.plugins import Adapter, SolverSpec, parse_spec

ADAPTERS: dict[str, tuple[str, str]] = {
    "c": ("pipeline.plugins.library", "LibrarySolver"),
    "python": ("pipeline.plugins.python_function", "PythonSolver"),
    "cmd": ("pipeline.plugins.program", "ProgramSolver"),
}

_local = threading.local()
_opened: list[Adapter] = []
_idle: dict[str, list[Adapter]] = {}  # opened, held by no thread: by spec
_lock = threading.Lock()
_generation = [0]  # bumped by close_adapters: every thread's cache is stale then


class _Lease:
    """A thread's adapters (in its `threading.local`): when the thread ends, its local
    storage goes and this with it, and the adapters go back to the pool."""

    def __init__(self) -> None:
        self.adapters: dict[str, Adapter] = {}
        self.generation = _generation[0]
        weakref.finalize(self, _give_back, self.adapters, self.generation).atexit = False


def _give_back(adapters: dict[str, Adapter], generation: int) -> None:
    with _lock:
        if generation != _generation[0]:  # closed meanwhile
            return
        for text, adapter in adapters.items():
            _idle.setdefault(text, []).append(adapter)


def adapter_class(spec: SolverSpec) -> type:
    """The class that implements `spec`'s kind (ValueError for a built-in strategy)."""
    if spec.builtin:
        raise ValueError(f"{spec.text!r} is a built-in strategy, not a solver from outside")
    module, name = ADAPTERS[spec.kind]
    return getattr(import_module(module), name)


def open_adapter(spec: SolverSpec | str) -> Adapter:
    """This thread's adapter for `spec`, opened on first use. `InputError` (one line) when the
    solver cannot be opened (a library or symbol missing, a program that does not start)."""
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    lease: _Lease | None = getattr(_local, "lease", None)
    if lease is None or lease.generation != _generation[0]:
        lease = _local.lease = _Lease()
    adapter = lease.adapters.get(spec.text)
    if adapter is None:
        with _lock:
            idle = _idle.get(spec.text)
            adapter = idle.pop() if idle else None
        if adapter is None:
            adapter = adapter_class(spec)(spec)
            with _lock:
                _opened.append(adapter)
        lease.adapters[spec.text] = adapter
    return adapter


def _put_back(spec: SolverSpec | str) -> None:
    """This thread no longer holds its adapter for `spec`: another thread may take it."""
    text = spec if isinstance(spec, str) else spec.text
    lease: _Lease | None = getattr(_local, "lease", None)
    if lease is None:
        return
    adapter = lease.adapters.pop(text, None)
    if adapter is not None:
        with _lock:
            if lease.generation == _generation[0]:
                _idle.setdefault(text, []).append(adapter)


def open_solver(spec: SolverSpec | str) -> Adapter:
    """`open_adapter` for a job about to start: any failure to open the solver (a library,
    symbol, module or program missing, a bad spec) is one `InputError` line naming it. The
    adapter is lent for a look (its description, `solver_metadata`): it goes back to the pool
    at once, for the job's workers to take."""
    text = spec if isinstance(spec, str) else spec.text
    try:
        adapter = open_adapter(spec)
    except InputError:
        raise
    except (OSError, ValueError, ImportError, AttributeError, RuntimeError) as e:
        reason = str(e).splitlines()[0] if str(e) else repr(e)
        raise InputError(f"solver {text!r}: {reason}") from None
    _put_back(spec)
    return adapter


def solver_metadata(adapter: Adapter) -> dict[str, Any]:
    """What a run's metadata records of its solver: the spec, its kind, its version (None
    when it has none), and what the adapter says of itself (a library's path and size)."""
    record: dict[str, Any] = {
        "spec": adapter.spec.text,
        "kind": adapter.spec.kind,
        "version": adapter.version(),
    }
    describe = getattr(adapter, "describe", None)
    if callable(describe):
        record |= describe()
    return record


def close_adapters() -> None:
    """Close every adapter this process opened (at exit; tests call it too)."""
    with _lock:
        opened = list(_opened)
        _opened.clear()
        _idle.clear()
        _generation[0] += 1
    for adapter in opened:
        try:
            adapter.close()
        except Exception:  # noqa: BLE001, S110 - closing at exit must not fail the run
            pass


atexit.register(close_adapters)
