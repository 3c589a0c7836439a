"""benchmarks.kernel_profile: perf's map of numba's functions, written by a process that
compiles the `fast` kernel, and the samples of a function put beside its machine code (no
perf needed: samples made up at known addresses)."""

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.kernel_profile import shares

ROOT = Path(__file__).resolve().parents[1]

LISTING = [(0x10, "mov (%rdi),%rax"), (0x13, "pext %rcx,%rax,%rax"), (0x18, "test %rax,%rax")]


def test_samples_are_shared_out_over_the_instructions_they_hit():
    base = 0x7F0000001000
    samples = Counter({base + 0x18: 6, base + 0x13: 2, base + 0x10: 2})
    rows, on_starts = shares(samples, base, LISTING)
    assert [(share, offset) for share, offset, _ in rows] == [
        (20.0, 0x10),
        (20.0, 0x13),
        (60.0, 0x18),
    ]
    assert on_starts == 10


def test_a_copy_the_samples_did_not_run_in_fits_them_worse():
    base = 0x7F0000001000
    samples = Counter({base + 0x18: 6, base + 0x13: 2, base + 0x10: 2})
    _, fit = shares(samples, base + 1, LISTING)  # the same listing one byte off: mid-instruction
    assert fit < 10


def test_a_run_names_the_kernels_functions_for_perf(tmp_path):
    perf_map, objects = tmp_path / "perf.map", tmp_path / "objects"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.kernel_profile", "run", "--set", "sample",
         "--seconds", "0", "--map", str(perf_map), "--objects", str(objects)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "3,000 puzzles, fast" in done.stdout
    entries = [line.split(" ", 2) for line in perf_map.read_text().splitlines()]
    names = {name for _, _, name in entries}
    assert all(int(size, 16) > 0 for _, size, _ in entries)
    for function in ("solve_kernel", "fast_propagate9propagate", "_load_givens"):
        assert any(function in name for name in names), function
    addresses = (objects / "addresses.tsv").read_text().splitlines()
    resolved = dict(line.split("\t") for line in addresses)
    assert set(resolved) == names
    assert list(objects.glob("*.o"))
    if shutil.which("nm") is None:
        pytest.skip("no binutils: the objects' symbols are not read")
    files = [str(path) for path in objects.glob("*.o")]
    symbols = subprocess.run(["nm", *files], capture_output=True, text=True)
    assert "fast_propagate9propagate" in symbols.stdout


def test_an_unknown_set_is_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.kernel_profile", "run", "--set", "nonesuch",
         "--map", str(tmp_path / "map")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: no set 'nonesuch' here: 'sample', or one of 17-clue, top1465, "
        "forum_hardest_1905_11+, forum_hardest_1106, serg_benchmark, kaggle_first9999"
    ]
