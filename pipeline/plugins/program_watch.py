"""The watcher between a worker and a `cmd:` solver's program (run as a script, standard
library only: `python -I -S program_watch.py STATUS_FD PROGRAM [ARGS...]`).

It starts the program in a process group of its own, with this process's stdin, stdout and
stderr (the worker's pipes), lets go of stdin and stdout itself (so that the worker sees the
end of the program's output when the program ends), and reports on STATUS_FD `pid N` and, when
the program has ended, `status RC` (a negative RC: killed by that signal), or `error WHY` when
it could not start. It ends the program's whole group, and reaps it, when it is told to
(SIGTERM, the worker's `close()` or a timeout) or when the worker that started it is gone (even
killed with SIGKILL: its parent changes), so a program never outlives its worker.
"""

import os
import signal
import subprocess
import sys
import threading
import time

POLL_SECONDS = 0.1  # how soon a worker's death is noticed


def main() -> int:
    status, argv = int(sys.argv[1]), sys.argv[2:]
    parent = os.getppid()
    started: list[int] = []
    ending = threading.Event()

    def end(*_: object) -> None:
        ending.set()
        for pid in started:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, end)  # before the program starts: no window without it
    try:
        program = subprocess.Popen(argv, process_group=0)
    except OSError as e:
        os.write(status, f"error {e.strerror or e}\n".encode())
        return 127
    started.append(program.pid)
    os.write(status, f"pid {program.pid}\n".encode())
    if ending.is_set():  # told to end while it was starting
        end()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)

    def watch_parent() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_SECONDS)
        end()

    threading.Thread(target=watch_parent, daemon=True).start()
    code = program.wait()
    os.write(status, f"status {code}\n".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
