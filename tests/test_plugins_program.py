"""`cmd:COMMAND` (pipeline/plugins/program.py): a program reading puzzles on stdin answers
generated puzzles; its crashes, hangs and stray lines are row errors, never a crash; it is
started again after a failure; and no process of it is left behind, even when its worker is
killed."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from pipeline import generate
from pipeline.grid import parse_puzzles
from pipeline.plugins import parse_spec
from pipeline.plugins.program import TIMEOUT_ENV, ProgramSolver, parse_replies, parse_reply

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc, sends signals")

# A program that knows the answers (a file of `puzzle solution` lines) and misbehaves on demand:
# `--crash-after K` / `--hang-after K` / `--garbage-after K` / `--extra`: on the line after K of
# each start, exit 3 (a line on stderr first), sleep, print a bad line; one line too many;
# `--kill-after K`: SIGKILL itself; `--linger`: stay at the end of its input (only a kill
# ends it).
ORACLE = """
import argparse, os, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("answers")
parser.add_argument("--pidfile")
parser.add_argument("--crash-after", type=int, default=-1)
parser.add_argument("--hang-after", type=int, default=-1)
parser.add_argument("--garbage-after", type=int, default=-1)
parser.add_argument("--extra", action="store_true")
parser.add_argument("--linger", action="store_true")
parser.add_argument("--kill-after", type=int, default=-1)
args = parser.parse_args()
if args.pidfile:
    with open(args.pidfile, "a") as f:
        f.write(f"{os.getpid()}\\n")
known = dict(line.split() for line in open(args.answers))
for k, line in enumerate(sys.stdin):
    if k == args.crash_after:
        print("boom: out of cheese", file=sys.stderr)
        sys.exit(3)
    if k == args.kill_after:
        os.kill(os.getpid(), 9)
    if k == args.hang_after:
        time.sleep(3600)
    if k == args.garbage_after:
        print("hello")
        continue
    print(known.get(line.strip(), ""))
    if args.extra and k == 0:
        print(known.get(line.strip(), ""))
if args.linger:
    time.sleep(3600)
"""


@pytest.fixture(scope="module")
def puzzles() -> tuple[np.ndarray, np.ndarray]:
    """Six generated puzzles (one solution each) and their solutions, `(n, 81) uint8`."""
    frame = generate(6, seed=25)
    return (parse_puzzles(frame["puzzle"].to_list()).grids,
            parse_puzzles(frame["solution"].to_list()).grids)  # fmt: skip


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory, puzzles) -> str:
    """The command (without options) of the oracle program for the six puzzles."""
    folder = tmp_path_factory.mktemp("program")
    grids, solutions = puzzles
    lines = ["".join(str(v) if v else "." for v in g) + " " + "".join(map(str, s))
             for g, s in zip(grids.tolist(), solutions.tolist(), strict=True)]  # fmt: skip
    (folder / "answers.txt").write_text("\n".join(lines) + "\n")
    (folder / "oracle.py").write_text(textwrap.dedent(ORACLE))
    return f"{sys.executable} {folder / 'oracle.py'} {folder / 'answers.txt'}"


def program(command: str, timeout: float | None = None) -> ProgramSolver:
    return ProgramSolver(parse_spec(f"cmd:{command}"), timeout=timeout)


def ask(solver: ProgramSolver, grids: np.ndarray):
    return solver.answer(grids, np.zeros(len(grids), dtype=np.bool_), 2)


def pids(pidfile: Path) -> list[int]:
    return [int(line) for line in pidfile.read_text().split()]


def running(pid: int) -> bool:
    """The process is there and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(condition, seconds: float = 15.0) -> bool:
    """Poll `condition` until it holds or `seconds` pass (processes end asynchronously)."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def test_a_program_answers_in_order_with_times(oracle, puzzles):
    grids, solutions = puzzles
    solver = program(oracle)
    assert not solver.holds_gil and solver.version() is None
    try:
        skip = np.zeros(6, dtype=np.bool_)
        skip[2] = True
        answers = solver.answer(grids, skip, 2)
        asked = ~skip
        assert np.array_equal(answers.solutions[asked], solutions[asked])
        assert not answers.solutions[2].any() and answers.solve_ns[2] == 0
        assert answers.errors == [None] * 6 and answers.guesses is None
        assert (answers.counts == -1).all() and (answers.solve_ns[asked] > 0).all()
        again = ask(solver, grids)  # the same program, the same answers
        assert np.array_equal(again.solutions, solutions) and solver.starts == 1
    finally:
        solver.close()


def test_a_batch_larger_than_a_pipe_buffer_does_not_deadlock(oracle, puzzles):
    grids, solutions = puzzles
    many = np.tile(grids, (600, 1))  # 3,600 lines, ~295 KB each way
    solver = program(oracle)
    try:
        answers = ask(solver, many)
        assert np.array_equal(answers.solutions, np.tile(solutions, (600, 1)))
    finally:
        solver.close()


def test_an_unknown_puzzle_is_an_empty_line_a_count_of_zero(oracle, puzzles):
    grids, _ = puzzles
    blank = np.zeros((1, 81), dtype=np.uint8)
    solver = program(oracle)
    try:
        answers = ask(solver, blank)
        assert answers.counts.tolist() == [0] and answers.errors == [None]
    finally:
        solver.close()


def test_a_malformed_line_is_that_rows_error(oracle, puzzles):
    grids, solutions = puzzles
    solver = program(f"{oracle} --garbage-after 1")
    try:
        answers = ask(solver, grids[:3])
        assert answers.errors == [None, "the program printed a line of 5 characters, not 81: "
                                        "'hello'", None]  # fmt: skip
        assert np.array_equal(answers.solutions[[0, 2]], solutions[[0, 2]])
    finally:
        solver.close()


def test_a_crash_mid_batch_leaves_errors_and_a_restart(oracle, puzzles, tmp_path):
    grids, solutions = puzzles
    pidfile = tmp_path / "pids"
    solver = program(f"{oracle} --crash-after 2 --pidfile {pidfile}")
    try:
        answers = ask(solver, grids)
        assert np.array_equal(answers.solutions[:2], solutions[:2])
        assert answers.errors[:2] == [None, None]
        ended = "the program ended (exit status 3): boom: out of cheese"
        assert answers.errors[2] == ended
        assert answers.errors[3:] == [
            f"unanswered, the program failed on an earlier puzzle: {ended}"] * 3  # fmt: skip
        assert not running(pids(pidfile)[0])
        answers = ask(solver, grids[3:5])  # started again, answers the next batch
        assert np.array_equal(answers.solutions, solutions[3:5]) and solver.starts == 2
    finally:
        solver.close()
    assert len(pids(pidfile)) == 2 and not any(map(running, pids(pidfile)))


def test_a_program_killed_by_a_signal_says_which(oracle, puzzles):
    grids, _ = puzzles
    solver = program(f"{oracle} --kill-after 0")
    try:
        answers = ask(solver, grids[:2])
        assert answers.errors[0] == "the program ended (killed by SIGKILL)"
    finally:
        solver.close()


def test_a_program_that_cannot_start_is_every_rows_error(tmp_path, puzzles):
    grids, _ = puzzles
    script = tmp_path / "not_a_program"
    script.write_text("no shebang, not a binary\n")
    script.chmod(0o755)
    solver = program(str(script))
    try:
        answers = ask(solver, grids[:2])
        assert answers.errors[0] == "the program could not start: Exec format error"
        assert answers.errors[1].endswith("could not start: Exec format error")
    finally:
        solver.close()


def test_a_hang_is_a_timeout_the_program_killed_and_started_again(oracle, puzzles, tmp_path):
    grids, solutions = puzzles
    pidfile = tmp_path / "pids"
    solver = program(f"{oracle} --hang-after 1 --pidfile {pidfile}", timeout=0.5)
    try:
        answers = ask(solver, grids[:3])
        assert answers.errors[0] is None
        assert answers.errors[1] == (f"the program gave no answer within 0.5 s (stopped; "
                                     f"{TIMEOUT_ENV} sets the limit)")  # fmt: skip
        assert answers.errors[2].startswith("unanswered, the program failed on an earlier")
        assert answers.solve_ns[1] >= 0.5e9
        hung = pids(pidfile)[0]
        assert not running(hung) and not Path(f"/proc/{hung}").exists()  # killed and reaped
        answers = ask(solver, grids[:1])
        assert np.array_equal(answers.solutions, solutions[:1]) and solver.starts == 2
    finally:
        solver.close()


def test_a_slow_start_is_allowed_more_than_a_puzzle(tmp_path, puzzles):
    grids, _ = puzzles
    slow = tmp_path / "slow_start.py"
    slow.write_text("import sys, time\ntime.sleep(0.6)\nfor line in sys.stdin:\n    print()\n")
    solver = program(f"{sys.executable} {slow}", timeout=0.2)
    try:
        assert ask(solver, grids[:2]).errors == [None, None]  # 0.6 s: within its start time
        solver.close()
        solver.start_timeout = 0.0
        answers = ask(solver, grids[:2])
        assert answers.errors[0] == (f"the program gave no answer within 0.2 s (stopped; "
                                     f"{TIMEOUT_ENV} sets the limit)")  # fmt: skip
    finally:
        solver.close()


def test_close_leaves_no_process_nor_zombie(oracle, puzzles, tmp_path):
    grids, _ = puzzles
    pidfile = tmp_path / "pids"
    solver = program(f"{oracle} --pidfile {pidfile}")
    ask(solver, grids[:1])
    watcher = solver._running.watcher.pid  # type: ignore[union-attr]
    (pid,) = pids(pidfile)
    assert running(pid) and running(watcher)
    solver.close()
    assert not Path(f"/proc/{pid}").exists() and not Path(f"/proc/{watcher}").exists()
    solver.close()  # twice: nothing to do


def test_a_program_ignoring_the_end_of_its_input_is_killed_on_close(tmp_path):
    stubborn = tmp_path / "stubborn.py"
    pidfile = tmp_path / "pids"
    stubborn.write_text(
        textwrap.dedent(f"""
        import os, signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        open({str(pidfile)!r}, "w").write(str(os.getpid()))
        sys.stdin.readline()
        print("")
        sys.stdin.close()
        time.sleep(3600)
    """)
    )
    solver = program(f"{sys.executable} {stubborn}")
    ask(solver, np.zeros((1, 81), dtype=np.uint8))
    (pid,) = pids(pidfile)
    solver.close()
    assert not Path(f"/proc/{pid}").exists()


WORKER = """
import sys
import numpy as np
from pipeline.plugins import parse_spec
from pipeline.plugins.program import ProgramSolver
solver = ProgramSolver(parse_spec("cmd:" + sys.argv[1]))
solver.answer(np.zeros((1, 81), dtype=np.uint8), np.zeros(1, dtype=np.bool_), 2)
print("ready", flush=True)
sys.stdin.readline()
"""


def test_a_killed_worker_leaves_no_program_running(oracle, tmp_path):
    pidfile = tmp_path / "pids"
    command = f"{oracle} --linger --pidfile {pidfile}"  # ends only when killed
    worker = subprocess.Popen([sys.executable, "-c", WORKER, command],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    try:
        assert worker.stdout is not None and worker.stdout.readline() == b"ready\n"
        (pid,) = pids(pidfile)
        assert running(pid)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        assert wait_until(lambda: not running(pid)), "the program outlived its worker"
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def test_lines_beyond_the_puzzles_restart_the_program_before_the_next_batch(oracle, puzzles):
    grids, solutions = puzzles
    solver = program(f"{oracle} --extra")
    try:
        ask(solver, grids[:1])
        # Its extra line may come in the same read or later; either way the next batch is not
        # read out of step: a program with lines left over is started again first.
        assert wait_until(lambda: _pending(solver))
        answers = ask(solver, grids[1:2])  # (out of step, it would get grids[0]'s solution)
        assert np.array_equal(answers.solutions, solutions[1:2]) and solver.starts == 2
    finally:
        solver.close()


def _pending(solver: ProgramSolver) -> bool:
    running_now = solver._running
    assert running_now is not None
    if running_now.out_buffer.strip():
        return True
    try:
        running_now.out_buffer += os.read(running_now.stdout, 1 << 16)
    except BlockingIOError:
        pass
    return bool(running_now.out_buffer.strip())


@pytest.mark.parametrize("command,message", [
    ("no-such-program-25 --fast", "no program 'no-such-program-25' on the PATH"),
    ("/no/such/solver", "no program '/no/such/solver'"),
    ("solver 'unclosed", "cannot read the command"),
])  # fmt: skip
def test_a_command_that_cannot_run_is_one_value_error(command, message):
    with pytest.raises(ValueError, match=message):
        program(command)


def test_the_timeout_from_the_environment(monkeypatch, oracle):
    monkeypatch.setenv(TIMEOUT_ENV, "2.5")
    assert program(oracle).timeout == 2.5
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match="not a number of seconds"):
        program(oracle)


def test_parse_reply():
    solution = b"534678912672195348198342567859761423426853791713924856961537284287419635345286179"
    assert parse_reply(b"\n") is None and parse_reply(b"  \r") is None
    assert parse_reply(solution + b"\r").tolist() == [int(c) for c in solution.decode()]
    dotted = parse_reply(b"." + solution[1:-1] + b"x")
    assert dotted[0] == 0 and dotted[80] == 10
    assert parse_reply(b"12").startswith("the program printed a line of 2 characters")


def test_parse_replies_reads_a_mixed_batch_in_order():
    solution = b"534678912672195348198342567859761423426853791713924856961537284287419635345286179"
    read = parse_replies([solution, b"", b"oops", b" " + solution[::-1] + b"\r"])
    assert read.empty.tolist() == [False, True, False, False]
    assert list(read.unreadable) == [2]
    assert read.solutions[0].tolist() == [int(c) for c in solution.decode()]
    assert read.solutions[3].tolist() == [int(c) for c in solution.decode()[::-1]]
    assert not read.solutions[1].any() and not read.solutions[2].any()


def test_warm_starts_the_program_before_the_first_batch(oracle, puzzles, tmp_path):
    grids, solutions = puzzles
    pidfile = tmp_path / "pids"
    solver = program(f"{oracle} --pidfile {pidfile}")
    try:
        solver.warm()
        assert solver.starts == 1 and running(pids(pidfile)[0])
        assert np.array_equal(ask(solver, grids).solutions, solutions) and solver.starts == 1
    finally:
        solver.close()


def test_a_flood_without_an_end_of_line_is_a_failure_not_memory(tmp_path):
    flood = tmp_path / "flood.py"
    flood.write_text(
        "import sys\nsys.stdin.readline()\nwhile True:\n    sys.stdout.write('7' * 65536)\n"
    )
    solver = program(f"{sys.executable} {flood}")
    try:
        answers = ask(solver, np.zeros((2, 81), dtype=np.uint8))
        assert answers.errors[0] == "the program printed a line of over 1,048,576 bytes"
        assert solver._running is None  # stopped, to start again
    finally:
        solver.close()


def test_all_answered_before_all_was_read_restarts_the_program(tmp_path):
    eager = tmp_path / "eager.py"
    eager.write_text("import sys\nsys.stdin.readline()\nprint('\\n' * 2999)\n"
                     "for line in sys.stdin:\n    print()\n")  # fmt: skip
    solver = program(f"{sys.executable} {eager}")
    try:
        answers = ask(solver, np.zeros((3000, 81), dtype=np.uint8))  # ~246 KB: beyond a pipe
        assert answers.errors == [None] * 3000
        assert solver._running is None  # its input is out of step: started again next time
    finally:
        solver.close()


@pytest.mark.parametrize(
    "spec, sentence",
    [
        ("cmd:/no/such/prog", "no program '/no/such/prog'"),
        ("python:no_such_module_xyz:fn", "no module 'no_such_module_xyz'"),
    ],
)
def test_a_solver_that_cannot_open_is_one_plain_sentence(spec: str, sentence: str) -> None:
    """The error line names the solver and says why, without the reason wrapped in quotes."""
    from pipeline.errors import InputError
    from pipeline.plugins.open import open_solver

    with pytest.raises(InputError) as caught:
        open_solver(spec)
    assert str(caught.value).startswith(f"solver {spec!r}: {sentence}")
