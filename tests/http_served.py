"""A local HTTP server of a temporary folder, for the tests of inputs at URLs: `http.server` in a
thread, with Range requests unless told not to, recording what it was asked and how many body
bytes it sent for each request. Nothing here reaches beyond this machine.

    def test_x(server):                       # the fixture (import it: `from tests.http_served
        (server.folder / "a.csv").write_text(...)  # import server`)
        open_dataset(server / "a.csv")
        server.forget()                       # from here on, count only the requests that follow
        ...
        assert server.sent < ...              # body bytes of the requests since `forget()`

Each response counts its bytes into its own request's record, before writing them, so a
response still being written when a test calls `forget()` (a client that read a body's start
and left: the server goes on writing into the socket's buffers) is never counted to the
requests that follow, and a client never sees a byte that is not counted yet.
"""

from __future__ import annotations

import email.utils
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

CHUNK = 1 << 16  # the server writes a body in pieces of this size


@dataclass
class Asked:
    """One request: its path, its Range header, and the body bytes sent for it so far."""

    path: str
    range: str | None
    sent: int = 0


class Server:
    """What the handler serves, and what it was asked (for the tests to look at)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ranges = True  # answer `Range:` with 206 and say `Accept-Ranges: bytes`
        self.asked: list[Asked] = []  # every request since the start or the last `forget()`
        self.authorizations: list[str | None] = []  # the Authorization header of each
        self.cut: dict[str, int] = {}  # name -> body bytes sent before the connection drops
        self.hold: threading.Event | None = None  # set: answer; unset: keep the client waiting
        self.url = ""
        self._lock = threading.Lock()

    def __truediv__(self, name: str) -> str:
        return f"{self.url}/{name}"

    @property
    def requests(self) -> list[tuple[str, str | None]]:
        """(path, Range header) of each request since the start or the last `forget()`."""
        with self._lock:
            return [(asked.path, asked.range) for asked in self.asked]

    @property
    def sent(self) -> int:
        """Body bytes sent for the requests since the start or the last `forget()`."""
        with self._lock:
            return sum(asked.sent for asked in self.asked)

    def forget(self) -> None:
        """Count from here on only the requests that follow (responses under way keep their
        bytes to themselves)."""
        with self._lock:
            self.asked = []
            self.authorizations = []

    def record(self, path: str, range: str | None, authorization: str | None) -> Asked:
        asked = Asked(path, range)
        with self._lock:
            self.asked.append(asked)
            self.authorizations.append(authorization)
        return asked


class Handler(BaseHTTPRequestHandler):
    server_state: Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        try:
            self._answer(body=True)
        except ConnectionError:  # the client read what it wanted (or gave up) and left
            self.close_connection = True

    def _answer(self, body: bool) -> None:
        state = self.server_state
        headers = self.headers
        record = state.record(self.path, headers.get("Range"), headers.get("Authorization"))
        if state.hold is not None:
            state.hold.wait()
        path = state.folder / unquote(urlsplit(self.path).path).lstrip("/")
        if not path.is_file():
            self.send_error(404, "Not Found")
            return
        stat = path.stat()
        size = stat.st_size
        start, end, status = 0, size, 200
        asked = self.headers.get("Range")
        if state.ranges and asked:
            first, last = re.fullmatch(r"bytes=(\d*)-(\d*)", asked).groups()
            if first == "":
                start = max(0, size - int(last))
            else:
                start, end = int(first), min(size, int(last) + 1) if last else size
            status = 206
        self.send_response(status)
        self.send_header("Content-Length", str(end - start))
        self.send_header("ETag", f'"{stat.st_mtime_ns:x}-{size:x}"')
        self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
        if state.ranges:
            self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        self.end_headers()
        if not body:
            return
        stop = min(end, start + state.cut[path.name]) if path.name in state.cut else end
        with open(path, "rb") as f:
            f.seek(start)
            while start < stop:
                data = f.read(min(CHUNK, stop - start))
                record.sent += len(data)  # before the client can see them (only this thread adds)
                self.wfile.write(data)
                start += len(data)
        if path.name in state.cut:
            self.close_connection = True


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """A local HTTP server of the folder `tmp_path / "served"`, its URL `server.url`."""
    for name in ("http_proxy", "https_proxy", "all_proxy"):  # straight to 127.0.0.1
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    folder = tmp_path / "served"
    folder.mkdir()
    state = Server(folder)
    handler = type("Served", (Handler,), {"server_state": state})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        if state.hold is not None:
            state.hold.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()
