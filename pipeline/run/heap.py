"""The package's own processes keep the memory a batch frees for the next batch.

    keep_freed_memory()   # the command line's process, and each worker process, as it starts

Each batch allocates its arrays anew (the grids, the kernel's outputs, the strings of the
result table: a few MiB at a time) and frees them when its results are sent on. With its
default settings, glibc's malloc gives the heap's free top back to the system whenever it
grows past a threshold, and serves large blocks by `mmap`; either way the next batch takes
the same memory again, a page fault for every 4 KiB page: 778 faults a batch of 10,000
Kaggle rows, 1.35 ms of its 14.6 (9%, `fast`, one core; `make bench`'s `pipeline_e2e`
measures whole runs). With the two thresholds set (either alone stops glibc adapting the
other, and was slower than neither: 1,700-2,400 faults a batch), none. Whole commands,
`solve` with its 2 threads, the two versions in turn (7-11 pairs, medians; AMD EPYC, 2 cores):
2,000,000 Kaggle rows 4.33 -> 3.98 s wall (system time 0.97 -> 0.54 s), 196,632 17-clue
rows 0.93x, the 3,000-row sample 1.03 -> 0.88 s (the imports allocate too), at the same
peak memory (460 MiB on the Kaggle rows). Blocks above `MMAP_BYTES` are still mapped apart
and given back when freed, and so is free memory above `TRIM_BYTES` at the heap's top.

Only where the process is the package's own: the command line (`main`) and its worker
processes, never a notebook's process that imports the API (its allocator is its owner's).
Elsewhere than glibc (macOS, musl), nothing is done.
"""

import ctypes
import ctypes.util
import functools
import platform

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_BYTES = 32 << 20  # glibc's largest mmap threshold on 64-bit: blocks above it are mapped
TRIM_BYTES = 256 << 20  # free memory at the heap's top given back above this


@functools.cache
def keep_freed_memory() -> bool:
    """Set glibc's malloc to keep freed memory for reuse (the module docstring), once a
    process; whether it is set (False: not glibc, or glibc refused)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success, 0 on error
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_BYTES)
    )
