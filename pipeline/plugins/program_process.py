"""One start of a `cmd:` solver's program (`program.py` speaks the protocol): the watcher
process it runs under (`program_watch.py`), its pipes (non-blocking), the last line of its
stderr, why it ended, and how it is stopped so that nothing of it is left running or unreaped.
"""

import os
import signal
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any

GRACE_SECONDS = 2.0  # how long a program is given to end on its own (end of input, SIGTERM)
CHUNK = 1 << 16  # bytes read or written at a time
_WATCHER = Path(__file__).with_name("program_watch.py")


def _describe_status(code: int | None) -> str:
    if code is None:
        return "it closed its output"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class ProgramProcess:
    """One start of the program: its watcher process, pipes and the tail of its stderr."""

    def __init__(self, argv: list[str]) -> None:
        status_read, status_write = os.pipe()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        try:
            self.watcher = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_WATCHER), str(status_write), *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(status_write,),
                start_new_session=True,
                env=env,
            )
        finally:
            os.close(status_write)
        self.status_fd = status_read
        self.status_text = b""
        self.stderr_tail: deque[bytes] = deque(maxlen=1)
        self._stderr_part = b""
        assert self.watcher.stdin and self.watcher.stdout and self.watcher.stderr
        self.stdin, self.stdout, self.stderr = (
            self.watcher.stdin.fileno(),
            self.watcher.stdout.fileno(),
            self.watcher.stderr.fileno(),
        )
        for fd in (self.stdin, self.stdout, self.stderr, status_read):
            os.set_blocking(fd, False)
        self.out_buffer = b""
        self.replied = False  # it has answered once: started up

    def take_stderr(self) -> bool:
        """Read what stderr has now (keeping its last non-empty line); False at its end."""
        while True:
            try:
                data = os.read(self.stderr, CHUNK)
            except BlockingIOError:
                return True
            if not data:
                return False
            lines = (self._stderr_part + data).split(b"\n")
            self._stderr_part = lines.pop()[-1000:]
            self.stderr_tail.extend(line for line in lines if line.strip())

    def last_stderr(self) -> str:
        """The last non-empty line the program wrote on stderr ("" when none)."""
        self.take_stderr()
        lines = [line for line in (*self.stderr_tail, self._stderr_part) if line.strip()]
        return lines[-1].decode("utf-8", "replace").strip()[:200] if lines else ""

    def _read_status(self) -> dict[str, str]:
        while True:
            try:
                data = os.read(self.status_fd, 4096)
            except BlockingIOError:
                break
            if not data:
                break
            self.status_text += data
        said = {}
        for line in self.status_text.decode("utf-8", "replace").splitlines():
            key, _, value = line.partition(" ")
            said[key] = value
        return said

    def ended(self) -> str:
        """Why the program is gone (after its output closed): waits for the watcher a moment,
        ending it if it does not end, and says `exit status N` / `killed by SIGX` / the error
        it could not start with, and its last line on stderr."""
        self.stop(polite=True)
        said = self._read_status()
        if "error" in said:
            return f"the program could not start: {said['error']}"
        code = int(said["status"]) if said.get("status", "").lstrip("-").isdigit() else None
        tail = self.last_stderr()
        return f"the program ended ({_describe_status(code)})" + (f": {tail}" if tail else "")

    def stop(self, polite: bool, grace: float = GRACE_SECONDS) -> None:
        """End the program (polite: close its input first and give it `grace` seconds), its
        group with it, and reap the watcher: nothing is left running or unreaped."""
        if polite:
            _close_quietly(self.watcher.stdin)
            try:
                self.watcher.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        if self.watcher.poll() is None:
            self.watcher.send_signal(signal.SIGTERM)  # the watcher kills the program's group
            try:
                self.watcher.wait(grace)
            except subprocess.TimeoutExpired:
                self._kill_group()
                self.watcher.kill()
                self.watcher.wait()
        _close_quietly(self.watcher.stdin)

    def _kill_group(self) -> None:
        pid = self._read_status().get("pid", "")
        if pid.isdigit():
            try:
                os.killpg(int(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        for pipe in (self.watcher.stdin, self.watcher.stdout, self.watcher.stderr):
            _close_quietly(pipe)
        try:
            os.close(self.status_fd)
        except OSError:
            pass


def _close_quietly(pipe: Any) -> None:
    try:
        if pipe is not None:
            pipe.close()
    except OSError:  # BrokenPipeError when a program that has gone leaves input unread
        pass


__all__ = ["CHUNK", "GRACE_SECONDS", "ProgramProcess"]
