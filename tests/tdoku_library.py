"""tdoku's shared library for the tests that check our answers against it: `TDOKU_LIB`, or
`libtdoku_shared.so` beside `TDOKU_BENCH`'s `run_benchmark` (the benchmarks' settings). Those
tests skip when neither names a built library."""

import ctypes
import os
from pathlib import Path

SKIP_REASON = "tdoku's library is not built (set TDOKU_LIB or TDOKU_BENCH)"


def tdoku_path() -> Path | None:
    """The library's path, when one of the two settings names a file that exists."""
    candidates = [os.environ.get("TDOKU_LIB")]
    bench = os.environ.get("TDOKU_BENCH")
    if bench:
        candidates.append(str(Path(bench).with_name("libtdoku_shared.so")))
    return next((Path(c) for c in candidates if c and Path(c).is_file()), None)


def tdoku_library() -> ctypes.CDLL | None:
    """The library loaded, its solver's signature declared; None when not built."""
    path = tdoku_path()
    if path is None:
        return None
    library = ctypes.CDLL(str(path))
    solve = library.TdokuSolverDpllTriadSimd
    solve.restype = ctypes.c_size_t
    solve.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
                      ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t)]  # fmt: skip
    return library
