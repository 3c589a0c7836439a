"""The solver's own process: forked by the keeper (`keeper.py`), it opens the solver (loads the
library, imports the module) and answers the requests the keeper passes on, in the shared
rows (`shared.py`), until its pipe closes. Whatever the solver does here (a segfault, `exit`,
`os._exit`, a loop that never ends) ends or stalls this process only; the keeper sees it.

It runs in a process group of its own (the keeper kills the group: what the solver started
goes with it), prints to stderr (what the solver prints never mixes with results on stdout),
and ends when the keeper does (Linux: `PR_SET_PDEATHSIG`; elsewhere a thread that watches).
"""

import ctypes
import os
import sys
import threading
import time
from typing import Any, NoReturn, Protocol

import numpy as np

from pipeline.plugins.messages import receive, send
from pipeline.plugins.shared import PENDING, SharedMemory, write_error

WATCH_SECONDS = 0.2  # how soon a solver's process notices its keeper is gone (not Linux)


class Served(Protocol):
    """A solver opened in this process (`library_calls.LibraryFunction`,
    `python_calls.PythonFunction`)."""

    about: dict[str, Any]

    def ask(self, header: np.ndarray, rows: Any, limit: int, fetch: bool, single: bool) -> None:
        """Answer every row of `rows`, keeping `header` up to date."""
        ...


def open_served(opening: dict[str, Any]) -> Served:
    """The solver `opening` names, opened here."""
    if opening["kind"] == "c":
        from pipeline.plugins.library_calls import LibraryFunction

        return LibraryFunction(opening["target"])
    from pipeline.plugins.python_calls import PythonFunction

    for folder in opening["path"]:  # the worker's path: its modules are found as there
        if folder not in sys.path:
            sys.path.append(folder)
    return PythonFunction(opening["target"])


def _end_with_keeper(keeper: int) -> None:
    """End this process when the keeper ends (even killed with SIGKILL)."""
    if sys.platform == "linux":
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
            if os.getppid() == keeper:
                return
        except (OSError, AttributeError):
            pass
        else:
            os._exit(1)  # it ended before the signal was asked for

    def watch() -> None:
        while os.getppid() == keeper:
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def serve(requests: int, replies: int, memory: SharedMemory, opening: dict[str, Any]) -> NoReturn:
    """The life of the solver's process (called in the keeper's fork; never returns)."""
    try:
        _end_with_keeper(os.getppid())
        os.dup2(2, 1)  # the solver's prints go to stderr
        sys.stdout = sys.stderr
        try:
            served = open_served(opening)
        except BaseException as e:  # noqa: BLE001 - the reason goes to the worker
            text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            send(replies, ("open_failed", text))
            os._exit(0)
        send(replies, ("opened", served.about))
        while (message := receive(requests)) is not None:
            _, n, limit, fetch, single = message[:5]
            rows = memory.rows(n)
            try:
                served.ask(memory.header, rows, limit, fetch, single)
            except Exception as e:  # noqa: BLE001 - every row left says why
                for i in np.flatnonzero(rows.state == PENDING).tolist():
                    write_error(rows, i, f"the solver's adapter failed: {type(e).__name__}: {e}")
            send(replies, ("done",))
    finally:
        os._exit(0)


__all__ = ["Served", "open_served", "serve"]
