"""How the program ends: quickly, with all it wrote delivered and its exit handlers run."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import COMMAND, linux_only

SAMPLE = Path(__file__).parents[1] / "data" / "sample.csv"


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_leaving_runs_exit_handlers_and_flushes_what_was_printed():
    done = run_python("""
        import atexit, sys
        from pipeline.cli import process
        atexit.register(lambda: print("handler ran"))
        print("buffered, not yet flushed", end=" ")
        sys.stderr.write("to stderr")
        process.leave(3)
    """)

    assert done.returncode == 3
    assert done.stdout == "buffered, not yet flushed handler ran\n"
    assert done.stderr == "to stderr"


def test_leaving_waits_for_a_thread_that_is_still_working(tmp_path):
    done = run_python(f"""
        import threading, time
        from pathlib import Path
        from pipeline.cli import process
        def work():
            time.sleep(0.3)
            Path({str(tmp_path / "done")!r}).write_text("finished")
        threading.Thread(target=work).start()
        process.leave(None)
    """)

    assert done.returncode == 0, done.stderr
    assert (tmp_path / "done").read_text() == "finished"


JOBS_TO_STDOUT = {
    "solve": ["solve", str(SAMPLE), "-o", "-", "--format", "csv", "-q"],
    "validate": ["validate", "{clashing}", "-o", "-", "--format", "jsonl", "-q", "--exit-zero"],
    "generate": ["generate", "20000", "--clues", "40", "--seed", "1", "-q"],
}  # fmt: skip


@linux_only
@pytest.mark.parametrize("job", JOBS_TO_STDOUT)
def test_a_reader_that_stops_early_ends_the_job_quietly_with_141(job, tmp_path):
    clashing = tmp_path / "clashing.txt"  # 5,000 findings to report
    clashing.write_text(("1" * 81 + "\n") * 5000)
    argv = [arg.format(clashing=clashing) for arg in JOBS_TO_STDOUT[job]]
    # The first write is large: CPython's own buffered stdout would call it done and exit 0.
    run = subprocess.Popen([*COMMAND, *argv], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)  # fmt: skip
    assert run.stdout.readline()
    run.stdout.close()  # like `| head -1`

    assert run.wait(timeout=120) == 141
    assert run.stderr.read() == b""


def test_ctrl_c_while_the_command_line_is_built_is_one_line_and_130():
    """Ctrl-C after the program's first imports, while Typer builds the command (a quarter of a
    second on a busy machine), before a command runs: one line, as at any other moment."""
    done = run_python("""
        import sys
        import typer.main
        from pipeline.cli import main

        def interrupted(app):  # where the Ctrl-C lands
            raise KeyboardInterrupt

        typer.main.get_command = interrupted
        sys.argv = ["sudoku-pipeline", "solve", "x.csv"]
        main()
    """)

    assert done.returncode == 130, done.stderr
    assert done.stderr == "error: interrupted\n"


@pytest.mark.parametrize(
    "program",
    ["/usr/bin/sudoku-pipeline", "/x/pipeline/__main__.py", "/x/pipeline/cli/__main__.py"],
)
def test_the_first_signals_are_answered_however_the_program_is_started(program):
    """As the console script, `python -m pipeline` or `python -m pipeline.cli`: a Ctrl-C while
    the modules load is one line and 130, not a traceback out of an import."""
    done = run_python(f"""
        import signal, sys
        sys.argv = [{program!r}, "solve", "x.csv"]
        import pipeline.cli
        print(signal.getsignal(signal.SIGINT).__name__, signal.getsignal(signal.SIGTERM).__name__)
    """)

    assert done.stdout.split() == ["_interrupted_while_starting"] * 2, done.stderr
