"""`cmd:COMMAND`: a program as a solver (docs/SOLVERS.md).

The command is split as a shell would (`shlex`) and run without a shell, once per adapter (the
wiring opens one per worker), on the first batch it is asked. It reads puzzles one a line on
stdin (81 characters, `.` for a blank, `\\n` ended) and writes one line per puzzle, in order, on
stdout: 81 digits (a solution) or an empty line (none). It must flush its output after each
line (or at least whenever it has read all it was given): the program stays up between
batches, so output left in its buffer never arrives. Python programs get
`PYTHONUNBUFFERED=1`; a C program can call `fflush(stdout)` or run under `stdbuf -oL`.

A batch is written and read at once, through one `select` loop over non-blocking pipes, so
neither side ever waits on a full pipe buffer. `solve_ns` of a row is the time from the
previous reply (the first: from the first write) to its own; replies that arrive in one read
share that time evenly. The sum over a batch is its wall time on the program's side.

What can go wrong is a row's error sentence, never a crash: a line that is neither 81 cells nor
empty is that row's; a program that ends mid-batch leaves the rows it did not answer with its
exit status and last line on stderr, and starts again for the next batch; a program that gives
no reply within `timeout` seconds (per puzzle: from the previous reply; default
`DEFAULT_TIMEOUT`, or `SUDOKU_SOLVER_TIMEOUT` in the environment, or the adapter's `timeout`
attribute; its first reply after a start is allowed `start_timeout` more, `START_SECONDS`) is
killed, its unanswered rows get errors, and it starts again for the next batch.

The program runs under a small watcher (`program_watch.py`; `program_process.py` starts and
stops it) in a process group of its own: `close()` ends the group; if the worker dies, even by
SIGKILL, the watcher ends it.
"""

import os
import selectors
import shlex
import shutil
import time
from typing import Any, NamedTuple

import numpy as np

from pipeline.plugins import Answers, SolverSpec, unanswered
from pipeline.plugins.program_process import CHUNK, ProgramProcess

DEFAULT_TIMEOUT = 10.0  # seconds a puzzle may take before the program is thought hung
TIMEOUT_ENV = "SUDOKU_SOLVER_TIMEOUT"
START_SECONDS = 60.0  # more for its first reply after a start (imports, a model loading)
LONGEST_LINE = 1 << 20  # a reply without its end of line beyond this: a failure, not memory
WARM_GRID = np.frombuffer(  # a complete grid: any solver answers it at once
    b"534678912672195348198342567859761423426853791713924856961537284287419635345286179",
    dtype=np.uint8,
) - ord("0")


def timeout_from_env() -> float:
    """The per-puzzle timeout `SUDOKU_SOLVER_TIMEOUT` sets, or `DEFAULT_TIMEOUT`."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{TIMEOUT_ENV}={text!r} is not a number of seconds above 0")
    return seconds


def command_of(target: str) -> list[str]:
    """The program and arguments of `cmd:TARGET`, the program found on PATH (or as a path);
    ValueError with one sentence when it is not there or cannot be run."""
    try:
        argv = shlex.split(target)
    except ValueError as e:
        raise ValueError(f"cannot read the command {target!r}: {e}") from None
    if not argv:
        raise ValueError("the command is empty")
    program = argv[0]
    found = shutil.which(program) if os.sep not in program else program
    if found is None:
        raise ValueError(f"no program {program!r} on the PATH")
    if not os.path.isfile(found):
        raise ValueError(f"no program {program!r}")
    if not os.access(found, os.X_OK):
        raise ValueError(f"{program!r} is not executable")
    return [found, *argv[1:]]


class Replies(NamedTuple):
    """The program's lines for a batch, read all at once."""

    solutions: np.ndarray  # (m, 81) uint8: `.`/`0` a blank, any other non-digit 10 (incomplete)
    empty: np.ndarray  # (m,) bool: an empty line, "no solution"
    unreadable: dict[int, str]  # why a line is neither 81 cells nor empty, by its position


def parse_replies(lines: list[bytes]) -> Replies:
    """The program's lines (`\r` and surrounding spaces ignored), a whole batch in one numpy
    pass: a line at a time cost more than the tdoku program it read (~16 us against ~10)."""
    texts = [line.strip() for line in lines]
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    full = np.flatnonzero(sizes == 81)
    block = np.frombuffer(b"".join([texts[k] for k in full.tolist()]), dtype=np.uint8)
    cells = block.reshape(-1, 81).astype(np.int16) - ord("0")
    cells[block.reshape(-1, 81) == ord(".")] = 0
    solutions = np.zeros((len(texts), 81), dtype=np.uint8)
    solutions[full] = np.where((cells >= 0) & (cells <= 9), cells, 10)
    unreadable = {}
    for k in np.flatnonzero((sizes != 81) & (sizes != 0)).tolist():
        shown = texts[k][:30].decode("ascii", "replace") + ("..." if sizes[k] > 30 else "")
        unreadable[k] = f"the program printed a line of {sizes[k]} characters, not 81: {shown!r}"
    return Replies(solutions, sizes == 0, unreadable)


def parse_reply(line: bytes) -> np.ndarray | str | None:
    """One line of the program's output: `(81,) uint8`, None (empty: no solution), or a
    sentence saying why it cannot be read (`parse_replies` for one line)."""
    replies = parse_replies([line])
    if replies.empty[0]:
        return None
    return replies.unreadable.get(0, replies.solutions[0])


class ProgramSolver:
    """A program answering puzzles over pipes (module docstring); opened once per worker."""

    holds_gil = False

    def __init__(self, spec: SolverSpec, timeout: float | None = None) -> None:
        self.spec = spec
        self.argv = command_of(spec.target)
        self.timeout = timeout_from_env() if timeout is None else float(timeout)
        self.start_timeout = START_SECONDS  # added to the first reply's after a (re)start
        self._running: ProgramProcess | None = None
        self.starts = 0  # how many times the program was started (restarts after failures)

    def version(self) -> str | None:
        """A program states no version through this contract."""
        return None

    def describe(self) -> dict[str, Any]:
        """What the run metadata records besides the spec."""
        return {
            "command": self.argv,
            "timeout_s": self.timeout,
            "start_timeout_s": self.start_timeout,
        }

    def warm(self) -> None:
        """Start the program and have it answer one complete grid (`WARM_GRID`; its answer
        not kept), so that a clock started afterwards (`bench`) does not hold its start-up."""
        self.answer(WARM_GRID[None, :], np.zeros(1, dtype=np.bool_), 1)

    def answer(self, grids: np.ndarray, skip: np.ndarray, limit: int) -> Answers:
        """Answer the rows not skipped, one line each (`limit` is not passed on: the program
        says one solution or none, so a grid is "found" and uniqueness is left to our kernel)."""
        grids, rows, answers = unanswered(grids, skip)
        if not len(rows):
            return answers
        asked = grids[rows]
        chars = np.where(asked == 0, ord("."), asked + ord("0")).astype(np.uint8)
        lines = np.hstack([chars, np.full((len(rows), 1), ord("\n"), np.uint8)])
        payload = memoryview(lines.tobytes())  # sliced without copies as the pipe takes it
        replies, times, failure = self._exchange(payload, len(rows))
        errors = answers.errors
        assert errors is not None
        m = len(replies)
        answered = rows[:m]
        answers.solve_ns[rows[: len(times)]] = np.asarray(times, dtype=np.int64)
        read = parse_replies(replies)
        answers.solutions[answered] = read.solutions
        answers.counts[answered[read.empty]] = 0
        for k, sentence in read.unreadable.items():
            errors[rows[k]] = sentence
        if failure is not None:
            errors[rows[m]] = failure
            for i in rows[m + 1 :].tolist():
                errors[i] = f"unanswered, the program failed on an earlier puzzle: {failure}"
        return answers

    def _start(self) -> ProgramProcess:
        if self._running is not None and self._running.watcher.poll() is not None:
            self._discard()  # it ended between batches: start again
        if self._running is None:
            self._running = ProgramProcess(self.argv)
            self.starts += 1
        return self._running

    def _discard(self) -> None:
        running, self._running = self._running, None
        if running is not None:
            running.stop(polite=False)
            running.close()

    def _exchange(self, payload: memoryview, n: int) -> tuple[list[bytes], list[int], str | None]:
        """Write `payload` (n lines) and read n replies: the replies, their times (one more
        for the row it failed on), and why the rest are missing (None when all came)."""
        running = self._start()
        if running.out_buffer.strip():  # lines no puzzle asked for: out of step, start again
            self._discard()
            running = self._start()
        replies: list[bytes] = []
        times: list[int] = []
        selector = selectors.DefaultSelector()
        selector.register(running.stdin, selectors.EVENT_WRITE)
        selector.register(running.stdout, selectors.EVENT_READ)
        selector.register(running.stderr, selectors.EVENT_READ)
        sent = 0
        last = time.perf_counter_ns()
        allowed = self.timeout + (0.0 if running.replied else self.start_timeout)
        deadline = time.monotonic() + allowed
        failure = None
        try:
            while failure is None and len(replies) < n:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    failure = (
                        f"the program gave no answer within {allowed:g} s (stopped; "
                        f"{TIMEOUT_ENV} sets the limit)"
                    )
                    break
                for key, _ in selector.select(wait):
                    if key.fd == running.stdin:
                        sent = self._feed(running, payload, sent)
                        if sent == len(payload):
                            selector.unregister(key.fd)
                    elif key.fd == running.stderr:
                        if not running.take_stderr():
                            selector.unregister(key.fd)
                    else:
                        got = self._take_output(running, replies, n)
                        if got is None:
                            failure = running.ended()
                            break
                        if len(running.out_buffer) > LONGEST_LINE:
                            failure = f"the program printed a line of over {LONGEST_LINE:,} bytes"
                            break
                        if got:
                            now = time.perf_counter_ns()
                            share = (now - last) // got
                            times.extend([share] * (got - 1) + [now - last - share * (got - 1)])
                            last, deadline = now, time.monotonic() + self.timeout
                            allowed, running.replied = self.timeout, True
        finally:
            selector.close()
        if failure is not None:
            times.append(time.perf_counter_ns() - last)
            self._discard()  # started again for the next batch
        elif sent < len(payload):  # all answered before all was read: out of step
            self._discard()
        return replies, times, failure

    @staticmethod
    def _feed(running: ProgramProcess, payload: memoryview, sent: int) -> int:
        """Write what the pipe takes of `payload` from `sent`; the new `sent`."""
        try:
            return sent + os.write(running.stdin, payload[sent : sent + CHUNK])  # a view
        except BlockingIOError:
            return sent
        except BrokenPipeError:
            return len(payload)  # it stopped reading; the end of its output says why

    @staticmethod
    def _take_output(running: ProgramProcess, replies: list[bytes], n: int) -> int | None:
        """Read what stdout has into `replies` (up to `n` in all); how many came, None at
        its end. Lines beyond `n` stay in the buffer, to be noticed before the next batch."""
        try:
            data = os.read(running.stdout, CHUNK)
        except BlockingIOError:
            return 0
        if not data:
            return None
        lines = (running.out_buffer + data).split(b"\n")
        running.out_buffer = lines.pop()
        fresh = lines[: n - len(replies)]
        if len(lines) > len(fresh):
            running.out_buffer = b"\n".join([*lines[len(fresh) :], running.out_buffer])
        replies.extend(fresh)
        return len(fresh)

    def close(self) -> None:
        """End the program: its input closed, a moment to end on its own, then its group
        killed; the watcher reaped."""
        running, self._running = self._running, None
        if running is not None:
            running.stop(polite=True)
            running.close()


__all__ = [
    "DEFAULT_TIMEOUT",
    "TIMEOUT_ENV",
    "WARM_GRID",
    "ProgramSolver",
    "command_of",
    "parse_replies",
    "parse_reply",
]
