"""The package's own processes keep the memory a batch frees for the next batch
(pipeline/run/heap.py): glibc's malloc then serves a batch's arrays from its heap, where the
last batch left them, not from fresh mappings that fault in page by page. Each check runs in a
fresh Python, whose allocator nobody has set yet (and the suite's own stays as it was)."""

import platform
import sys

import pytest

from tests.test_executors import run_scenario

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc"
)
BIG = 8 << 20  # the array of `mapped_bytes_for_a_big_array`


def mapped(setup: str) -> int:
    done = run_scenario(f"""
        {setup}
        from tests.worker_tasks import mapped_bytes_for_a_big_array
        print(mapped_bytes_for_a_big_array(0))
    """)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_a_big_array_is_mapped_apart_by_default_and_kept_on_the_heap_once_set():
    assert mapped("pass") >= BIG  # what the check tells apart: glibc's default
    assert mapped("from pipeline.run.heap import keep_freed_memory; keep_freed_memory()") < BIG


def test_setting_it_twice_is_setting_it_once():
    done = run_scenario("""
        from pipeline.run.heap import keep_freed_memory
        print(keep_freed_memory(), keep_freed_memory())
    """)
    assert done.stdout == "True True\n", done.stderr


def test_the_command_line_keeps_freed_memory():
    done = run_scenario("""
        import atexit, sys
        from tests.worker_tasks import mapped_bytes_for_a_big_array
        atexit.register(lambda: print(mapped_bytes_for_a_big_array(0)))  # once `main` ends
        sys.argv = ["sudoku-pipeline", "--version"]
        from pipeline.cli.commands import main
        main()
    """)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) < BIG


def test_worker_processes_keep_freed_memory():
    done = run_scenario("""
        from pipeline.run.executors import ProcessExecutor
        from tests.worker_tasks import mapped_bytes_for_a_big_array

        executor = ProcessExecutor(2)
        print(*executor.map_ordered(mapped_bytes_for_a_big_array, range(4)))
    """)
    assert done.returncode == 0, done.stderr
    mapped_in_workers = [int(b) for b in done.stdout.split()]
    assert len(mapped_in_workers) == 4 and max(mapped_in_workers) < BIG


def test_a_notebooks_process_is_left_as_it_is():
    """Importing the API (and solving) sets nothing: the process is its owner's."""
    assert mapped("import pipeline; pipeline.solve_batch(['.' * 81])") >= BIG
