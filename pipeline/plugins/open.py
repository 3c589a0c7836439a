"""The adapter of a solver spec, opened once per worker and closed when the process ends.

A worker process opens each solver it is asked for once and keeps it for every batch. Threads
of one process each open their own (`threading.local`): a program's pipes, or a Python
solver's state, are not shared between threads. Adapters are closed at exit (`atexit`), in
the order they were opened. Adapters are found by module name and imported on first use, so
asking for one kind never imports the others.
"""

import atexit
import threading
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
_lock = threading.Lock()
_generation = [0]  # bumped by close_adapters: every thread's cache is stale then


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
    if getattr(_local, "generation", None) != _generation[0]:
        _local.adapters, _local.generation = {}, _generation[0]
    cache: dict[str, Adapter] = _local.adapters
    adapter = cache.get(spec.text)
    if adapter is None:
        adapter = adapter_class(spec)(spec)
        cache[spec.text] = adapter
        with _lock:
            _opened.append(adapter)
    return adapter


def open_solver(spec: SolverSpec | str) -> Adapter:
    """`open_adapter` for a job about to start: any failure to open the solver (a library,
    symbol, module or program missing, a bad spec) is one `InputError` line naming it."""
    text = spec if isinstance(spec, str) else spec.text
    try:
        return open_adapter(spec)
    except InputError:
        raise
    except (OSError, ValueError, ImportError, AttributeError, RuntimeError) as e:
        reason = str(e).splitlines()[0] if str(e) else repr(e)
        raise InputError(f"solver {text!r}: {reason}") from None


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
        _generation[0] += 1
    for adapter in opened:
        try:
            adapter.close()
        except Exception:  # noqa: BLE001, S110 - closing at exit must not fail the run
            pass


atexit.register(close_adapters)
