"""Messages between a worker, the keeper of its solver and the solver's process (`host.py`):
small pickled tuples over pipes, each prefixed with its length, written in one `write` (a
message under the pipe's atomic size arrives whole or not at all, so a process that dies
while writing leaves no half message behind).

    send(fd, ("ask", 1000, 2, True, False))
    message = receive(fd)       # None: the other end closed (its process ended)
"""

import os
import pickle
import struct
from typing import Any

_LENGTH = struct.Struct("<I")


def send(fd: int, message: Any) -> None:
    """Write `message` to `fd` (blocking). `BrokenPipeError` when the reader is gone."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts, left = [], size
    while left:
        data = os.read(fd, left)
        if not data:
            return None
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


def receive(fd: int) -> Any:
    """The next message on `fd` (blocking); None at the end of the pipe (or in the middle of a
    message: its writer died)."""
    head = _read_exactly(fd, _LENGTH.size)
    if head is None:
        return None
    body = _read_exactly(fd, _LENGTH.unpack(head)[0])
    return None if body is None else pickle.loads(body)  # noqa: S301 - our own processes


__all__ = ["receive", "send"]
