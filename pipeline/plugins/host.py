"""Solvers from outside that run in a process of their own, so that whatever they do costs only
the rows they did it on: `c:` libraries and `python:` functions (`cmd:` programs are processes
already: `program.py`).

A worker's adapter starts a keeper (`keeper.py`: `python -m pipeline.plugins.keeper`, in a
session of its own), which loads what the solver's calls need and forks the solver's process
(`runner.py`), which opens the solver (loads the library, imports the module) and answers
requests. Puzzles and answers go through a shared file (`shared.py`); the pipes carry only
small messages (`messages.py`).

    host = SolverHost({"kind": "c", "target": "/abs/libx.so:solve", ...})   # opened, or ValueError
    answers = hosted_answers(host, "c:./libx.so:solve", grids, limit=2, fetch=True)
    host.close()

When the solver's process dies (a segfault, `exit(3)`, `os._exit`) or gives no answer within
the timeout (per puzzle: `SUDOKU_SOLVER_TIMEOUT`, from its last answer; a call that holds k
puzzles at once is allowed k times that), the keeper kills it (its whole process group),
forks a new one and says what happened. The rows answered before are kept (they are in the
shared file); the row in hand gets a `solver_error` naming the solver and what ended it
(`killed by SIGSEGV`, `exit status 3`, the time allowed); the rest are asked again. When one
call held the rows (a batch function), none is known answered: they are asked again one at a
time, which finds the row.

Nothing is left behind: the keeper ends when the worker's end of its pipe closes (the worker
closed it, ended or was killed, even by SIGKILL), killing the solver's group first; the
solver's process ends when the keeper does (`runner.py`); the shared file is unlinked at once.
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.plugins import Answers, SolverSpec
from pipeline.plugins.messages import receive, send
from pipeline.plugins.program import START_SECONDS, TIMEOUT_ENV, WARM_GRID, timeout_from_env
from pipeline.plugins.shared import (
    ASKING,
    BATCH,
    BUDGET,
    FAILED,
    PENDING,
    PHASE,
    ROW,
    Rows,
    SharedMemory,
    read_error,
)

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder `pipeline` is in
STOP_SECONDS = 5.0  # how long `close` waits for the keeper to end


class SolverHost:
    """A running keeper and its solver's process, as the worker sees them."""

    def __init__(self, opening: dict[str, Any]) -> None:
        """Start the keeper and open the solver (`opening`: kind, target, path, timeouts);
        ValueError with the solver's reason when it cannot be opened."""
        self.memory = SharedMemory.create()
        requests_read, self.requests = os.pipe()
        self.replies, replies_write = os.pipe()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([_PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]),
        }
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pipeline.plugins.keeper",
                    str(requests_read),
                    str(replies_write),
                    str(self.memory.fd),
                ],
                pass_fds=(requests_read, replies_write, self.memory.fd),
                stdin=subprocess.DEVNULL,
                stdout=2,
                start_new_session=True,
                env=env,
            )
        finally:
            os.close(requests_read)
            os.close(replies_write)
        self.closed = False
        self.about: dict[str, Any] = {}
        reply = self._exchange(opening)
        if reply is None or reply[0] != "opened":
            self.close()
            raise ValueError(reply[1] if reply else "its process ended while it was opened")
        self.about = reply[1]

    def _exchange(self, message: Any) -> Any:
        """Send `message`, wait for the reply; None when the keeper is gone."""
        try:
            send(self.requests, message)
            return receive(self.replies)
        except (BrokenPipeError, OSError):
            return None

    def request(
        self,
        grids: np.ndarray,
        limit: int,
        fetch: bool,
        single: bool,
        timeout: float,
        start_timeout: float,
    ) -> tuple[Any, Rows]:
        """Ask about `grids` (every row); the keeper's reply (`("done",)`, `("died", how)`,
        `("timeout", seconds)`, `("open_failed", why)`; None: the keeper is gone) and the
        shared rows as the solver left them."""
        m = len(grids)
        rows = self.memory.rows(m, grow=True)
        rows.grids[:] = grids
        rows.state[:] = PENDING  # the solver's side writes every answer it marks done
        header = self.memory.header
        header[ROW], header[PHASE], header[BUDGET] = -1, ASKING, 1
        try:
            reply = self._exchange(("ask", m, limit, fetch, single, timeout, start_timeout))
        except BaseException:  # Ctrl-C mid-request: the keeper's state is unknown, let it go
            self.close()
            raise
        if reply is None:
            self.close()
        return reply, rows

    def close(self) -> None:
        """End the keeper (which kills the solver's process group first) and reap it."""
        if self.closed:
            return
        self.closed = True
        for fd in (self.requests, self.replies):
            try:
                os.close(fd)  # the keeper reads the end of its pipe: it stops
            except OSError:
                pass
        try:
            self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.memory.close()


def describe_failure(name: str, reply: Any) -> str:
    """Why the row in hand got no answer, naming the solver."""
    if reply is None:
        return f"{name}: its keeper process ended unexpectedly"
    kind, said = reply[0], reply[1] if len(reply) > 1 else ""
    if kind == "died":
        verb = "crashed" if said.startswith("killed") else "ended its process"
        return f"{name} {verb} on this puzzle ({said})"
    if kind == "timeout":
        return (
            f"{name} gave no answer within {said:g} s on this puzzle (stopped; "
            f"{TIMEOUT_ENV} sets the limit)"
        )
    return f"{name} could not be opened again after a failure: {said}"


def blank_answers(n: int, errors: bool) -> Answers:
    """Answers of n rows, none given yet."""
    return Answers(
        np.zeros((n, 81), dtype=np.uint8),
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        [None] * n if errors else None,
    )


def _take(answers: Answers, at: np.ndarray, rows: Rows, state: np.ndarray) -> None:
    """Copy the rows the solver answered (or failed, saying why) into `answers` at `at`."""
    m = len(at)
    if m and (state != PENDING).all() and at[-1] - at[0] == m - 1:  # all, in a run: slices
        done, where = slice(0, m), slice(int(at[0]), int(at[0]) + m)
    else:
        done = np.flatnonzero(state != PENDING)
        where = at[done]
    answers.solutions[where] = rows.solutions[done]
    answers.counts[where] = rows.counts[done]
    answers.guesses[where] = rows.guesses[done]
    answers.solve_ns[where] = rows.solve_ns[done]
    assert answers.errors is not None
    for k in np.flatnonzero(state == FAILED).tolist():
        answers.errors[int(at[k])] = read_error(rows, k)


class HostedSolver:
    """An adapter whose solver runs in its own process (the module docstring): crashes and
    hangs are the rows' `solver_error`, never the run's. Subclasses say what to open."""

    holds_gil = False  # the solver runs in its own process: this one's threads are free
    thread_safe = True  # each thread's adapter has its own solver process
    kind = ""
    start_timeout: float  # seconds more for its first answer after a (re)start

    def __init__(self, spec: SolverSpec, timeout: float | None = None) -> None:
        self.spec = spec
        self.timeout = timeout_from_env() if timeout is None else float(timeout)
        if "start_timeout" not in vars(type(self)):  # more for its first answer after a start
            self.start_timeout = START_SECONDS
        self._host: SolverHost | None = None
        self.about = self._open().about

    def opening(self) -> dict[str, Any]:
        """What the solver's process opens: kind, target (paths made absolute here, where the
        current folder is the user's), the module path, the timeouts."""
        return {
            "kind": self.kind,
            "target": self.spec.target,
            "path": list(sys.path),
            "timeout": self.timeout,
            "start_timeout": self.start_timeout,
        }

    def _open(self) -> SolverHost:
        if self._host is None or self._host.closed:
            self._host = SolverHost(self.opening())
        return self._host

    def version(self) -> str | None:
        version = self.about.get("version")
        return None if version is None else str(version)

    def warm(self) -> None:
        """One call on a complete grid (its answer not kept), so that a clock started
        afterwards (`bench`) does not hold the solver's first call."""
        self.answer(WARM_GRID[None, :], np.zeros(1, dtype=np.bool_), 1)

    def answer(
        self, grids: np.ndarray, skip: np.ndarray, limit: int, fetch: bool = True
    ) -> Answers:
        """Answer the rows not skipped, in the solver's process (the module docstring)."""
        grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
        answers = blank_answers(len(grids), errors=True)
        asked = np.flatnonzero(~np.asarray(skip, dtype=np.bool_))
        if len(asked):
            hosted_answers(self, grids, asked, int(limit), fetch, answers)
        if not (answers.guesses[asked] >= 0).any():  # it counts none: the column is null
            answers = answers._replace(guesses=None)
        return answers

    def close(self) -> None:
        if self._host is not None:
            self._host.close()


def hosted_answers(
    adapter: HostedSolver,
    grids: np.ndarray,
    pending: np.ndarray,
    limit: int,
    fetch: bool,
    answers: Answers,
) -> None:
    """Ask the solver about `grids[pending]` until every row has an answer or an error: after
    a crash or a timeout the rows answered are kept, the row in hand fails, the others are
    asked again (one at a time after a batch call failed)."""
    assert answers.errors is not None
    single, fruitless = False, 0
    while len(pending):
        try:
            host = adapter._open()
        except ValueError as e:  # it cannot be opened again (after the keeper was lost)
            for i in pending.tolist():
                answers.errors[i] = describe_failure(adapter.spec.text, ("open_failed", str(e)))
            return
        reply, rows = host.request(
            grids[pending], limit, fetch, single, adapter.timeout, adapter.start_timeout
        )
        m = len(pending)
        state = rows.state[:m].copy()
        _take(answers, pending, rows, state)
        row, phase = int(host.memory.header[ROW]), int(host.memory.header[PHASE])
        left = state == PENDING
        if reply is not None and reply[0] == "done":
            for i in pending[left].tolist():
                answers.errors[i] = f"{adapter.spec.text} gave no answer"
            return
        why = describe_failure(adapter.spec.text, reply)
        if reply is not None and reply[0] == "open_failed":
            left[:] = False
            for i in pending[state == PENDING].tolist():
                answers.errors[i] = why
        elif phase == BATCH and not single:
            single = True  # none known answered: one at a time finds the row
        elif 0 <= row < m and left[row]:
            answers.errors[int(pending[row])] = why
            left[row], fruitless = False, 0
        else:
            fruitless += 1
            if fruitless >= 2:  # it fails before any row: every row says so
                for i in pending[left].tolist():
                    answers.errors[i] = why
                return
        pending = pending[left]


__all__ = ["HostedSolver", "SolverHost", "blank_answers", "describe_failure", "hosted_answers"]
