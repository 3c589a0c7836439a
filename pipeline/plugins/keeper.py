"""The keeper of a solver from outside (`host.py`): `python -m pipeline.plugins.keeper REQUESTS
REPLIES MEMORY` (three file descriptors a worker passes on).

It loads what the solver's calls need (the compiled kernel that calls a C function), then
forks the solver's process (`runner.py`), which opens the solver, and passes the worker's
requests on to it. It runs no code of the solver's, so it always answers: while a request is
in hand it watches the shared header's tick (`shared.py`), and when the solver's process dies
or its row takes longer than the timeout it kills the process's group, says what happened
(`("died", "killed by SIGSEGV")`, `("timeout", seconds)`) and forks a new one (its start
costs milliseconds: the kernel is loaded already). The first answer after a (re)start is
allowed `start_timeout` more, for imports and lazy loading. It ends when the worker's end of
the requests pipe closes, killing the solver's group first.
"""

import os
import select
import signal
import sys
import time
from typing import Any

from pipeline.plugins.messages import receive, send
from pipeline.plugins.program_process import describe_status
from pipeline.plugins.runner import serve
from pipeline.plugins.shared import BUDGET, TICK, SharedMemory

POLL_SECONDS = 0.05  # how often the tick is read while a request is in hand


class Runner:
    """A forked solver's process, as the keeper holds it."""

    def __init__(self, pid: int, requests: int, replies: int) -> None:
        self.pid, self.requests, self.replies = pid, requests, replies
        self.fresh = True  # no answer yet since it started

    def kill(self) -> str:
        """Kill its group (the solver and anything it started), reap it; how it ended."""
        for target in (
            lambda: os.killpg(self.pid, signal.SIGKILL),
            lambda: os.kill(self.pid, signal.SIGKILL),
        ):
            try:
                target()
                break
            except (ProcessLookupError, PermissionError):
                continue
        return self.reap()

    def reap(self) -> str:
        """Wait for it to end (after its pipe closed: it has); how it ended."""
        for fd in (self.requests, self.replies):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return "it ended"
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        try:
            os.killpg(self.pid, signal.SIGKILL)  # what it started, if anything is left
        except (ProcessLookupError, PermissionError):
            pass
        return describe_status(code)


class Keeper:
    """The keeper's loop: requests passed on, the solver's process watched."""

    def __init__(self, requests: int, replies: int, memory: SharedMemory, opening: dict) -> None:
        self.requests, self.replies, self.memory, self.opening = requests, replies, memory, opening
        self.runner: Runner | None = None

    def start(self) -> str | dict[str, Any]:
        """Fork the solver's process and wait for it to open the solver: what it says of
        itself, or why it could not."""
        to_runner, requests = os.pipe()
        replies, from_runner = os.pipe()
        pid = os.fork()
        if pid == 0:  # the solver's process: never returns
            try:
                os.setpgid(0, 0)
                for fd in (requests, replies, self.requests, self.replies):
                    os.close(fd)
                serve(to_runner, from_runner, self.memory, self.opening)
            finally:
                os._exit(1)
        try:
            os.setpgid(pid, pid)
        except OSError:  # it did so itself already
            pass
        os.close(to_runner)
        os.close(from_runner)
        runner = Runner(pid, requests, replies)
        allowed = self.opening["timeout"] + self.opening["start_timeout"]
        ready, _, _ = select.select([replies], [], [], allowed)
        message = receive(replies) if ready else None
        if message is None or message[0] != "opened":
            how = runner.kill()
            if message is not None:
                return str(message[1])
            if not ready:
                return f"it did not open within {allowed:g} s (stopped)"
            return f"its process ended while it was opened ({how})"
        self.runner = runner
        return message[1]

    def run(self) -> None:
        opened = self.start()
        if isinstance(opened, str):
            send(self.replies, ("open_failed", opened))
            return
        send(self.replies, ("opened", opened))
        while (message := receive(self.requests)) is not None:
            if message[0] == "stop":
                break
            send(self.replies, self.ask(message))

    def ask(self, message: tuple) -> tuple:
        """Pass a request on and watch it to its end: the reply for the worker."""
        if self.runner is None:
            opened = self.start()
            if isinstance(opened, str):
                return ("open_failed", opened)
        runner = self.runner
        assert runner is not None
        timeout, start_timeout = message[5], message[6]
        header = self.memory.header
        tick, since = int(header[TICK]), time.monotonic()
        try:
            send(runner.requests, message)
        except OSError:  # it died between requests
            return self._lost("died", runner.reap())
        while True:
            ready, _, _ = select.select([runner.replies, self.requests], [], [], POLL_SECONDS)
            if runner.replies in ready:
                reply = receive(runner.replies)
                if reply is None:
                    return self._lost("died", runner.reap())
                runner.fresh = False
                return reply
            if self.requests in ready:  # only its end can come now: the worker is gone
                runner.kill()
                self.runner = None
                sys.exit(0)
            now = time.monotonic()
            if int(header[TICK]) != tick:
                tick, since = int(header[TICK]), now
            allowed = timeout * max(1, int(header[BUDGET]))
            allowed += start_timeout if runner.fresh else 0.0
            if now - since > allowed:
                runner.kill()
                return self._lost("timeout", allowed)

    def _lost(self, kind: str, said: Any) -> tuple:
        self.runner = None  # a new one is forked for the next request
        return (kind, said)

    def stop(self) -> None:
        if self.runner is not None:
            self.runner.kill()
            self.runner = None


def prepare(kind: str) -> None:
    """Load here, once, what every solver's process forked from this one calls."""
    if kind == "c":
        from pipeline.plugins.library_calls import warm_kernel

        warm_kernel()
    else:
        import pipeline.plugins.python_calls  # noqa: F401 - numpy and the readers, loaded


def main() -> int:
    requests, replies, memory_fd = (int(a) for a in sys.argv[1:4])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the worker decides; SIGTERM ends us
    opening = receive(requests)
    if opening is None:
        return 0
    memory = SharedMemory(memory_fd)
    keeper = Keeper(requests, replies, memory, opening)
    try:
        prepare(opening["kind"])
        keeper.run()
    except (BrokenPipeError, ConnectionError):  # the worker is gone
        pass
    finally:
        keeper.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
