"""Compiled kernels: cached in the user's cache folder (never beside the code, which a read-only
install cannot write), compiled in memory when no folder can be written, and a notice exactly
when compiling happens, in the command line and from the Python API."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import COMMAND

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pipeline"
SAMPLE = ROOT / "data" / "sample.csv"


def environment(**values: str) -> dict[str, str]:
    """This process's environment without numba's and XDG's cache settings, plus `values`;
    no compiling ahead in the background unless asked (`pipeline.run.compile_ahead`): these
    tests watch one command's own compiles and processes."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    return env | {"SUDOKU_PIPELINE_COMPILE_AHEAD": "0"} | values


def index_files(folder: Path) -> set[Path]:
    return set(folder.rglob("*.nbi"))


def test_the_cache_is_the_users_and_honours_numba_cache_dir(tmp_path):
    probe = "import pipeline.compiled as c; print(c.cache_root())"
    run = [sys.executable, "-c", probe]

    xdg = subprocess.run(run, env=environment(XDG_CACHE_HOME=str(tmp_path / "xdg")),
                         capture_output=True, text=True, check=True)  # fmt: skip
    numba = subprocess.run(run, env=environment(NUMBA_CACHE_DIR=str(tmp_path / "numba")),
                           capture_output=True, text=True, check=True)  # fmt: skip
    home = subprocess.run(run, env=environment(HOME=str(tmp_path / "home")),
                          capture_output=True, text=True, check=True)  # fmt: skip

    assert xdg.stdout.strip() == str(tmp_path / "xdg" / "sudoku-pipeline")
    assert numba.stdout.strip() == str(tmp_path / "numba")
    assert home.stdout.strip() == str(tmp_path / "home" / ".cache" / "sudoku-pipeline")


def test_a_first_run_says_it_compiles_once_and_writes_nothing_beside_the_code(tmp_path):
    cache = tmp_path / "cache"
    env = environment(XDG_CACHE_HOME=str(cache))
    out = tmp_path / "out.parquet"
    beside_the_code = index_files(PACKAGE)

    first = subprocess.run([*COMMAND, "solve", SAMPLE, "-o", out], env=env,
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    second = subprocess.run([*COMMAND, "solve", SAMPLE, "-o", out], env=env,
                            capture_output=True, text=True, timeout=600)  # fmt: skip

    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    notices = [line for line in first.stderr.splitlines() if "compiling" in line]
    assert len(notices) == 1, first.stderr
    assert notices[0].startswith("solve: compiling the solver kernels (first use; about ")
    assert str(cache / "sudoku-pipeline") in notices[0]
    assert "compiling" not in second.stderr
    assert index_files(cache)
    assert index_files(PACKAGE) == beside_the_code


def read_only_copy(folder: Path) -> Path:
    """A copy of the package where nothing can be written beside the code, as in a read-only
    site-packages (even for root: each `__pycache__` is a file, so no folder can be made)."""
    site = folder / "site"
    shutil.copytree(PACKAGE, site / "pipeline", ignore=shutil.ignore_patterns("__pycache__"))
    for package in (site / "pipeline").rglob("__init__.py"):
        (package.parent / "__pycache__").write_text("")
    return site


def test_with_no_writable_folder_the_api_compiles_in_memory_and_says_so(tmp_path):
    """A read-only install with no writable home (a container's `USER nobody`): numba found
    no cache locator and every call died with `RuntimeError: cannot cache function`. Now the
    kernels compile in memory, and a warning (which a notebook shows) says so."""
    site = read_only_copy(tmp_path)
    nowhere = "/dev/null/cache"  # not a folder, not for root either
    env = environment(XDG_CACHE_HOME=nowhere, HOME=nowhere, PYTHONPATH=str(site),
                      PYTHONDONTWRITEBYTECODE="1")  # fmt: skip
    call = ("import pipeline; r = pipeline.solve_batch(['.' * 81]); "
            "print(pipeline.__file__, r['verdict'][0])")  # fmt: skip

    done = subprocess.run([sys.executable, "-c", call], env=env, capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(site / "pipeline" / "__init__.py"), "multiple"]
    assert "CompilingWarning" in done.stderr and "in memory for this process only" in done.stderr
    assert not index_files(site)


def test_quiet_says_nothing_of_compiling(tmp_path):
    """`-q`: not a word but errors, a first run's notice included (here in a folder where
    the kernels are not cached yet: a fresh one)."""
    env = environment(XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([*COMMAND, "generate", "30", "-o", tmp_path / "g.csv", "-q"], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_kernels_not_cached_are_spread_over_the_cores_each_compiled_once(monkeypatch, tmp_path):
    import pipeline.compiled as compiled
    from pipeline.run import warmup

    monkeypatch.setattr(compiled, "kernel_cached", lambda module, name: False)
    monkeypatch.setattr(compiled, "_ROOT", tmp_path)
    monkeypatch.setattr(warmup, "_cores", lambda: 2)
    bench = ("fast", "mrv", "backtrack", "clash")  # mrv and backtrack: one kernel

    # the kernel right after the light lane's loaders it links, the full propagation (which
    # it calls at its address, not linked) anywhere beside it: here beside `mrv`
    assert warmup.lanes(bench) == [["fast_propagate", "mrv"], ["fast_light", "fast", "clash"]]
    # alone, the propagation compiles beside the kernel: a first `solve` took 12.0 CPU s of
    # compiling in one lane, 4.0 + 5.1 s with the halves apart, linked by the kernel after
    # both; 2.35 + 3.3 s beside 3.5 s with the propagations called (2-core AMD EPYC)
    assert warmup.lanes(("fast", "clash")) == [["fast_light", "fast"], ["fast_propagate", "clash"]]
    monkeypatch.setattr(warmup, "_cores", lambda: 1)
    one = [["fast_light", "fast", "fast_propagate", "mrv", "clash"]]
    assert warmup.lanes(bench) == one
    monkeypatch.setattr(warmup, "_cores", lambda: 2)
    monkeypatch.setattr(compiled, "_ROOT", None)  # compiled in memory: elsewhere is no use
    assert warmup.lanes(bench) == one


def test_a_kernel_made_of_parts_compiles_in_their_lane_right_after_them(monkeypatch, tmp_path):
    """A first `split` waited for both lanes before it compiled the canonical kernel (11.5 s,
    2-core Intel Xeon): now it follows its two searches in their lane, beside the solver's;
    the rating's ladder alike, after its two halves, unless nothing else is to compile."""
    import pipeline.compiled as compiled
    from pipeline.run import warmup

    monkeypatch.setattr(compiled, "kernel_cached", lambda module, name: False)
    monkeypatch.setattr(compiled, "_ROOT", tmp_path)
    monkeypatch.setattr(warmup, "_cores", lambda: 2)

    plan = warmup.lanes(("two_solutions", "clash", "verify", "canonical"))
    home = next(lane for lane in plan if "canonical" in lane)
    assert home.index("canonical_search") < home.index("canonical")
    # the complete grids' form: only when a batch holds one (or compiled ahead)
    assert not any("canonical_full" in lane for lane in plan)
    assert not any("canonical" in lane for lane in plan if lane is not home)
    # the rating's ladder calls its two halves at their addresses: it waits for nothing, and
    # is spread over the lanes like any kernel of its own (each placed once)
    rating = warmup.lanes(("fast", "clash", "rating"))
    placed = [name for lane in rating for name in lane]
    assert sorted(placed) == sorted(warmup.with_parts(("fast", "clash", "rating")))
    seconds = [sum(map(warmup._seconds, lane)) for lane in rating]
    assert max(seconds) - min(seconds) <= 1.0, rating
    to_compile = {"_easy_rungs", "_hard_rungs", "grade_kernel"}  # of pipeline.rating
    monkeypatch.setattr(compiled, "kernel_cached", lambda module, name: name not in to_compile)
    assert sorted(map(sorted, warmup.lanes(("rating",)))) == [
        ["rating", "rating_easy"],
        ["rating_hard"],
    ]


def test_the_notice_of_a_first_split_gives_the_whole_works_estimate(tmp_path):
    """Its first compile is a helper of the canonical kernel (`new_scratch`), none of the
    kernels the work listed: the notice gave that helper's 3 s for a 10 s wait."""
    import re

    env = environment(XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([*COMMAND, "split", SAMPLE, "-o", tmp_path / "splits"], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = re.search(r"about (\d+) s", done.stderr)
    assert said is not None, done.stderr
    assert int(said.group(1)) >= 6, done.stderr


def _lane_count_with_nothing_cached(folder: str) -> int:
    """(Run in a pool's process, whose globals it changes.)"""
    import pipeline.compiled as compiled
    from pipeline.run import warmup

    compiled.kernel_cached = lambda module, name: False
    compiled._ROOT = Path(folder)
    warmup._cores = lambda: 2
    return len(warmup.lanes(("fast", "mrv", "backtrack", "clash")))


def test_a_worker_process_compiles_in_one_lane(tmp_path):
    """In a pool's process the pool's other processes are the other lanes: no helpers."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_lane_count_with_nothing_cached, (str(tmp_path),)) == 1


def test_every_kernel_has_a_measured_compile_time():
    from pipeline.compiled import COMPILE_SECONDS
    from pipeline.run.warmup import KERNELS, compiled_names

    assert set(compiled_names(KERNELS)) == set(COMPILE_SECONDS)


def helpers_of(cache: Path) -> list[int]:
    """Processes whose environment names `cache` (the run's and its compiling helpers)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(cache).encode() in (proc / "environ").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_a_first_bench_compiles_side_by_side_says_it_once_and_leaves_no_process(tmp_path):
    cache = tmp_path / "cache"
    env = environment(XDG_CACHE_HOME=str(cache))

    first = subprocess.run([*COMMAND, "bench", SAMPLE, "--rows", "50", "--repeats", "1"],
                           env=env, capture_output=True, text=True, timeout=600)  # fmt: skip

    assert first.returncode == 0, first.stderr
    notices = [line for line in first.stderr.splitlines() if "compiling" in line]
    assert len(notices) == 1, first.stderr
    from pipeline.run.warmup import KERNELS

    names = {f"{module.rsplit('.', 1)[1]}.{name}" for name_ in ("fast", "mrv", "clash")
             for module, name in KERNELS[name_].compiled}  # fmt: skip
    assert names <= {p.name.split("-")[0] for p in index_files(cache)}
    assert helpers_of(cache) == []


def test_an_interrupted_first_run_leaves_no_compiling_process(tmp_path):
    import signal
    import time

    cache = tmp_path / "cache"
    env = environment(XDG_CACHE_HOME=str(cache))
    run = subprocess.Popen([*COMMAND, "bench", SAMPLE, "--rows", "50", "--repeats", "1"],
                           env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert "compiling" in run.stderr.readline()  # the helpers are started just after it
    run.send_signal(signal.SIGTERM)
    run.communicate(timeout=60)

    deadline = time.monotonic() + 60  # a helper checks for its parent every 0.2 s
    while helpers_of(cache) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert helpers_of(cache) == []
    # ended mid-work: the helper's kernel (mrv's and backtrack's) never reached the cache
    assert not any(p.name.startswith("reference.") for p in index_files(cache))


def test_work_given_up_before_it_compiled_says_nothing_as_it_finishes(tmp_path):
    """Ctrl-C between the warm-up's start and its first compile: the CLI says `interrupted`,
    and the warm-up finishing in the background must not add a CompilingWarning to it."""
    script = """
from pipeline.compiled import notices
from pipeline.run.warmup import expect_kernels, warm
try:
    with notices(lambda message: print("notice:", message)):
        expect_kernels(("clash",))
        raise KeyboardInterrupt  # before the warm-up's first compile
except KeyboardInterrupt:
    pass
warm(("clash",))  # the warm-up goes on in the background
"""
    env = environment(XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert "compiling" not in done.stdout + done.stderr


def test_the_first_command_compiles_every_other_commands_kernels_ahead(tmp_path):
    """Each command compiled its own kernels at its first use (generate ~8 s, validate ~5 s,
    split 9 s, --rate ~22 s): now the first one also starts a process apart that compiles
    the others', so that every later command starts warm, whatever it is."""
    import time

    from pipeline.run import compile_ahead

    cache = tmp_path / "cache"
    env = environment(XDG_CACHE_HOME=str(cache), SUDOKU_PIPELINE_COMPILE_AHEAD="1")
    first = subprocess.run([*COMMAND, "generate", "5", "-o", tmp_path / "g.csv"], env=env,
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("compiling") == 1  # its own: one line; the others in silence
    lock = cache / "sudoku-pipeline" / compile_ahead.LOCK
    deadline = time.monotonic() + 900
    while compile_ahead.running(lock.parent) and time.monotonic() < deadline:
        time.sleep(1)
    assert not compile_ahead.running(lock.parent)
    probe = "from pipeline.run.compile_ahead import missing; print(missing())"
    left = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    assert left.stdout.strip() == "[]"
    later_ones = [
        ["validate", SAMPLE, "-o", tmp_path / "v.parquet", "--exit-zero"],
        ["solve", SAMPLE, "-o", tmp_path / "r.parquet", "--rate", "--canonical"],
    ]
    for args in later_ones:
        later = subprocess.run([*COMMAND, *args], env=env, capture_output=True, text=True,
                               timeout=600)  # fmt: skip
        assert later.returncode == 0, later.stderr
        assert "compiling" not in later.stderr, later.stderr


def test_compiling_ahead_is_one_process_at_a_time_and_the_command_lines_alone(tmp_path):
    import fcntl
    import time

    from pipeline.run import compile_ahead

    lock = tmp_path / compile_ahead.LOCK
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert compile_ahead.running(tmp_path)
        start = time.monotonic()
        second = subprocess.run([sys.executable, "-m", "pipeline.run.compile_ahead", str(lock),
                                 "rating", "--"], env=environment(XDG_CACHE_HOME=str(tmp_path)),
                                capture_output=True, text=True, timeout=120)  # fmt: skip
        assert second.returncode == 0, second.stderr
        assert time.monotonic() - start < 30  # it found the lock taken and did nothing
    assert not compile_ahead.running(tmp_path)
    assert not index_files(tmp_path)
    # from Python (a notebook's call), never: only the command line starts one
    assert compile_ahead.ENABLED is False
    assert compile_ahead.start_compiling_ahead(("fast",)) is False


def test_compiling_ahead_takes_only_cpu_time_nothing_else_wants():
    """Its own session (so that a Ctrl-C of the command spares it) put it in a scheduling
    group of its own, where its nice 10 counted for nothing: it took half the machine from
    the command that started it (a first `split` 16.4 s against 11.4 s without it)."""
    if not sys.platform.startswith("linux"):
        return
    probe = (
        "import os; from pipeline.run.compile_ahead import lowest_priority; lowest_priority(); "
        "print(os.sched_getscheduler(0) == os.SCHED_IDLE, os.nice(0)); "
        # a process of the system's first session (PID 1's, where a container or a CI runner
        # may start the tests) is in no autogroup: the file reads empty
        "print((open('/proc/self/autogroup').read().split() or ['none'])[-1])"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, start_new_session=True)  # fmt: skip
    idle, nice, group_nice = done.stdout.split()
    assert (idle, nice) == ("True", "19")
    autogroups = Path("/proc/sys/kernel/sched_autogroup_enabled")
    if autogroups.exists() and autogroups.read_text().strip() == "1":
        assert group_nice == "19"
        # in a session it does not lead (run by hand, or by a test), the group is the
        # caller's: the test run's own, a terminal's, left as it was
        ours = Path("/proc/self/autogroup").read_text()
        left = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        assert left.returncode == 0, left.stderr
        assert Path("/proc/self/autogroup").read_text() == ours


PARTS_ONCE = """
from pipeline.run.warmup import warm
warm(("canonical", "canonical_full", "rating"))
from pipeline.canonical_forms import full, search
from pipeline.rating import difficulty
for part in (search.search_form, full.full_form, difficulty.symmetric_copies):
    print(part.__name__, len(part.signatures))
"""


def test_a_kernel_links_its_parts_compiled_side_by_side_never_compiles_them_again(tmp_path):
    """The canonical kernel (11 CPU s in one piece) compiles as parts side by side, then the
    kernel that calls them, and the rating's copies beside its ladder: a part loaded for other
    argument types than the kernel's would be compiled a second time, in series."""
    env = environment(XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", PARTS_ONCE], env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr
    counts = dict(line.split() for line in done.stdout.splitlines())
    assert counts == {name: "1" for name in counts} and len(counts) == 3, done.stdout
