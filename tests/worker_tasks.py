"""Tasks for worker processes in tests/test_executors.py and tests/test_heap.py: in a module
of their own, light to import, since every worker process imports it to run them."""

import multiprocessing
import os
import threading
import time
from pathlib import Path

RESULT_BYTES = 16 << 20  # a result that takes a worker a while to send: it is mostly sending


def big_result(item: int) -> bytes:
    return bytes(RESULT_BYTES)


def slow_in_workers() -> None:
    """A warm-up that takes minutes in a worker process (and nothing in the parent)."""
    if multiprocessing.parent_process() is not None:
        time.sleep(300)


def worker_pids() -> list[int]:
    """This process's worker processes (spawned children; the resource tracker aside)."""
    me, found = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            spawned = b"spawn_main" in (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == me and spawned:
            found.append(int(stat.parent.name))
    return found


def warm_through_c(began: threading.Event) -> None:
    """A warm-up whose Python code runs called back from C (as numba's LLVM calls back into
    Python when it loads a compiled kernel): a KeyboardInterrupt raised in the callback is lost
    there ("Exception ignored on calling ctypes callback function")."""
    import ctypes

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    def compare(a: int, b: int) -> int:
        began.set()
        time.sleep(5)
        return 0

    cells = (ctypes.c_int * 2)(1, 2)
    ctypes.CDLL(None).qsort(cells, 2, ctypes.sizeof(ctypes.c_int), compare)


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def square_or_fail(item: int) -> int:
    if item == 3:
        raise ValueError("no 3 here")
    return item * item


def mapped_bytes_for_a_big_array(item: int) -> int:
    """Bytes glibc's malloc holds mapped apart from its heap (`mallinfo2().hblkhd`) while an
    8 MiB array is alive: 8 MiB or more by default, less once the process keeps freed memory
    on its heap (pipeline/run/heap.py)."""
    import ctypes

    import numpy as np

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
            "fordblks", "keepcost")]  # fmt: skip

    mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
    mallinfo2.restype = MallInfo2
    array = np.ones(8 << 20, np.uint8)
    mapped = int(mallinfo2().hblkhd)
    del array
    return mapped
