"""Every kernel compiled once, whatever the command: the first command of the command line that
finds kernels missing from the cache compiles its own (side by side, `warmup.warm`) and starts
one process, apart from it, that compiles all the others into the cache, so that the next
command of any kind (validate after solve, `--rate` after split, ...) starts warm.

    start_compiling_ahead(("fast", "clash"))    # the command's own kernels: not these

The process:
* is started only by the command line (`enable()`, by its `main`), never by a notebook's
  call, and not at all when `SUDOKU_PIPELINE_COMPILE_AHEAD=0` or when no cache folder can
  be written (kernels compiled in memory would die with it);
* runs detached (its own session: a Ctrl-C of the command does not reach it; it outlives the
  command) at the lowest priority (`lowest_priority`), so that the command's own work and
  compiles go first, silently (nothing on the terminal), in `ORDER` (the kernels most
  commands need first), each kernel only when it is not cached yet, and at the end the
  command's own kernels too, should that command have been stopped before caching them;
* is one at a time: it holds an exclusive `flock` on `LOCK` in the cache folder, and a second
  one (two commands started together) finds it taken and ends at once. numba writes each
  cache entry to a temporary file and renames it into place, so a command compiling a kernel
  while the process does is safe (the later rename wins; both are the same code).

Measured in docs/BENCHMARKS.md (`python -m benchmarks.first_run`).
"""

import fcntl
import os
import subprocess
import sys
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

ENABLED = False  # `enable()`, by the command line's `main`: a library call never starts one
SWITCH = "SUDOKU_PIPELINE_COMPILE_AHEAD"  # "0": never compile ahead
LOCK = ".compile-ahead.lock"  # in the cache folder: held while the process runs
NICE = 19
# the kernels most commands need first: solve's, score's and generate's; validate's and
# augment's; enumerate's; bench's other strategies; the columns asked for; pencilmarks
ORDER = (
    "fast",
    "clash",
    "verify",
    "two_solutions",
    "augment",
    "enumerate",
    "mrv",
    "library",
    "canonical_search",
    "canonical_full",
    "canonical",
    "rating_copies",
    "rating_easy",
    "rating_hard",
    "rating",
    "pencilmarks",
)


def enable() -> None:
    """The command line's: each piece of work a job expects (`warmup.expect_kernels`) starts
    the process when kernels are missing."""
    global ENABLED
    from pipeline.run import warmup

    ENABLED = True
    warmup.on_expect = start_compiling_ahead


def missing(names: Iterable[str] = ORDER) -> list[str]:
    """The kernels of `names` (`warmup.KERNELS`) not all in the cache."""
    from pipeline.compiled import kernel_cached
    from pipeline.run.warmup import KERNELS

    return [n for n in names if not all(kernel_cached(*k) for k in KERNELS[n].compiled)]


def running(root: Path) -> bool:
    """Whether a process compiling ahead holds the lock in the cache folder `root`."""
    try:
        fd = os.open(root / LOCK, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # a shared lock taken is released with the descriptor
    return False


def start_compiling_ahead(own: Iterable[str] = ()) -> bool:
    """Start the process that compiles every kernel not cached yet but `own` (those the
    command compiles itself), when the command line asked for it and one is needed; whether
    one was started."""
    from pipeline.compiled import cache_root

    root = cache_root()
    if not ENABLED or root is None or os.environ.get(SWITCH, "1") == "0":
        return False
    own = tuple(own)
    todo = [n for n in missing() if n not in own]
    if not todo or running(root):
        return False
    package_parent = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
    subprocess.Popen(
        [sys.executable, "-m", __name__, str(root / LOCK), *todo, "--", *own],
        env={**os.environ, "PYTHONPATH": path},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    return True


def compile_ahead(lock: str, names: list[str], own: list[str]) -> None:
    """The process's work (see the module): under the lock, `names` then `own`, each when
    it is not cached yet; at once when another process holds the lock."""
    with _ExclusiveLock(lock) as held:
        if not held:
            return
        from pipeline.compiled import notices
        from pipeline.run.warmup import KERNELS, with_parts

        with notices(None):
            for name in with_parts([*names, *own]):
                if missing((name,)):
                    KERNELS[name].load()


class _ExclusiveLock:
    """An exclusive `flock` on `path` for the block (`as held`: False when it is taken)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> bool:
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None
            return False
        return True

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # the lock file stays: removing it would race a new holder


def lowest_priority() -> None:
    """This process runs only on CPU time nothing else wants. A nice value alone is not that:
    Linux shares the CPU between sessions first (the "autogroup" of each, on by default) and
    only then by nice within one, and this process has a session of its own; so a nice 10
    process took half the machine from the command it was started by (its first `split`
    16.4 s against 11.4 s with no process compiling ahead, 2-core Intel Xeon,
    `python -m benchmarks.first_run`). Its session's nice is raised too, and the process
    made SCHED_IDLE; where the system has none of these, what it has is used. (Run in a
    session it does not lead, its session is its caller's: left alone, or a terminal's
    every command would crawl.)"""
    with suppress(OSError):
        os.nice(NICE)
    with suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    if os.getsid(0) == os.getpid():  # a session of its own: else the group is the caller's
        with suppress(OSError):
            Path("/proc/self/autogroup").write_text(str(NICE))


def _main(argv: list[str]) -> None:
    """`python -m pipeline.run.compile_ahead LOCK NAME... -- OWN...`: the process."""
    lowest_priority()
    lock, rest = argv[0], argv[1:]
    at = rest.index("--")
    compile_ahead(lock, rest[:at], rest[at + 1 :])


if __name__ == "__main__":
    _main(sys.argv[1:])
