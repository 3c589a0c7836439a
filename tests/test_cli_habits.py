"""Small habits of a well-kept command: `-V`, `python -m pipeline`, and the program's own usage
errors (no command, an unknown one, an unknown option) in one line, exit code 2, as every
subcommand's are."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.io.runinfo import package_version

DATA = Path(__file__).resolve().parents[1] / "data"


def _program(*args: str) -> subprocess.CompletedProcess:
    """`python -m pipeline ARGS`, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True,
                          text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_has_a_short_flag(flag):
    done = CliRunner().invoke(app, [flag])

    assert done.exit_code == 0
    assert done.stdout == f"sudoku-pipeline {package_version()}\n"


def test_python_dash_m_pipeline_is_the_program():
    done = _program("-V")

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"sudoku-pipeline {package_version()}\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nosuchcommand"], "No such command 'nosuchcommand'."),
        (["solv"], "Did you mean 'solve'?"),
        ([], "Missing command, one of: solve, validate, generate, report, bench"),
        (["--nope"], "--nope"),  # click's words for it vary with its version
    ],
)
def test_the_programs_usage_errors_are_one_line_and_exit_code_2(args, says):
    done = _program(*args)

    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: ")
    assert done.stderr.endswith(" (see python -m pipeline --help)\n")
    assert done.stderr.count("\n") == 1
    assert says in done.stderr


def test_a_subcommands_usage_error_is_still_one_line():
    done = CliRunner().invoke(app, ["solve", "--nope"])

    assert done.exit_code == 2
    assert done.stderr.startswith("error: ")
    assert "--nope" in done.stderr
    assert done.stderr.count("\n") == 1


def _options_taking_one_value() -> list[tuple[str, str, bool]]:
    """(command, option, is a flag) for every option of every command that is not a list."""
    import typer

    group = typer.main.get_command(app)
    found = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            if param.param_type_name == "option" and not param.multiple and param.expose_value:
                if "--help" in param.opts or param.name in ("install_completion",):
                    continue
                found.append((name, max(param.opts, key=len), bool(param.is_flag)))
    return found


@pytest.mark.parametrize(("command", "option", "flag"), _options_taking_one_value())
def test_an_option_given_twice_is_refused_in_one_line(command, option, flag):
    # `bench --strategy fast --strategy mrv` ran mrv alone: the last one won, silently
    twice = [option, option] if flag else [option, "1", option, "2"]
    done = CliRunner().invoke(app, [command, *twice, "in.csv"])

    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"error: {option} given twice: give it once (see ")
    assert done.stderr.endswith(f" {command} --help)\n") and done.stderr.count("\n") == 1


def test_options_given_as_lists_are_lists():
    import typer

    group = typer.main.get_command(app)
    lists = {(name, max(p.opts, key=len)) for name, c in group.commands.items()  # type: ignore[attr-defined]
             for p in c.params if p.param_type_name == "option" and p.multiple}  # fmt: skip
    assert ("bench", "--strategy") in lists  # strategies compared side by side
    assert ("bench", "--solver") in lists and ("validate", "--against") in lists


# mrv searches 21,775 nodes for this puzzle of data/sample.csv (row 136): past its budget
DEEP_FOR_MRV = ".18..2......6..24.9....4.....6..5.1.3...1.6...4.......5..7..4..63..5...........25"


def test_one_default_node_budget_per_strategy_in_every_command(tmp_path):
    # bench gave mrv 20,000 nodes a puzzle by default, solve none: 171 of top1465 were
    # `limit` in one and solved in the other
    import pipeline
    from pipeline.jobs.bench.job import bench
    from pipeline.kernels.registry import node_budget

    assert (node_budget("fast"), node_budget("mrv"), node_budget("mrv", 7)) == (None, 20_000, 7)
    in_memory = pipeline.solve_batch([DEEP_FOR_MRV], strategy="mrv")
    assert (in_memory["verdict"][0], in_memory["nodes"][0]) == ("limit", 20_000)
    assert pipeline.solve_batch([DEEP_FOR_MRV], strategy="mrv", max_nodes=10**6)["verdict"][0] == (
        "solved"
    )
    source = tmp_path / "deep.txt"
    source.write_text(DEEP_FOR_MRV + "\n")
    solved = CliRunner().invoke(app, ["solve", str(source), "--strategy", "mrv", "-o",
                                      str(tmp_path / "out.csv")])  # fmt: skip
    assert solved.exit_code == 0, solved.output
    assert "20,000 nodes a puzzle at most): limit 1" in solved.stderr  # said in the footer
    (row,) = bench(source, strategy="mrv", repeats=1).rows
    assert row.limit == 1
    helped = CliRunner().invoke(app, ["solve", "--help"])
    assert "fast none, mrv 20,000, backtrack 20,000" in " ".join(helped.stdout.split())


def test_bench_measures_each_strategy_given():
    from pipeline.jobs.bench.job import bench

    result = bench(Path(DATA) / "sample.csv", strategy=["fast", "mrv"], rows=20, repeats=1)
    assert [r.strategy for r in result.rows] == ["fast", "mrv"]
    assert result.metadata["options"]["budgets"] == "fast none; mrv 20,000"
    args = ["--rows", "5", "--repeats", "1", "--strategy", "fast", "--strategy", "mrv", "--json"]
    done = CliRunner().invoke(app, ["bench", f"{DATA}/sample.csv", *args])
    assert done.exit_code == 0, done.output
    assert [r["strategy"] for r in json.loads(done.stdout)["rows"]] == ["fast", "mrv"]


def _floats(value, key=""):
    """(key, number) of every float in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _floats(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _floats(v, key)
    elif isinstance(value, float):
        yield key, value


def test_numbers_in_json_are_rounded_to_what_they_mean(tmp_path):
    # `"wall_s": 0.4135820359997524`: a time to the millisecond, a rate to 3 figures
    sample = str(DATA / "sample.csv")
    source = tmp_path / "few.csv"
    source.write_text("".join(open(sample).readlines()[:40]))
    out = str(tmp_path / "out")
    runs = {
        "solve": ["solve", str(source), "-o", f"{out}.parquet"],
        "validate": ["validate", str(source), "-o", f"{out}.f.parquet", "--exit-zero"],
        "generate": ["generate", "5", "-o", f"{out}.g.csv"],
        "bench": ["bench", str(source), "--repeats", "2", "--strategy", "fast"],
        "split": ["split", str(source), "-o", f"{out}.split"],
        "augment": ["augment", str(source), "-o", f"{out}.a.parquet", "--copies", "2"],
        "enumerate": ["enumerate", str(source), "-o", f"{out}.e.parquet", "--limit", "2"],
    }
    seen = set()
    for name, args in runs.items():
        done = CliRunner().invoke(
            app, [*args, "--json", "-q"] if name != "bench" else [*args, "--json"]
        )
        assert done.exit_code == 0, (name, done.output)
        for key, number in _floats(json.loads(done.stdout)):
            if key.endswith("_s"):
                assert round(number, 3) == number, (name, key, number)
                seen.add(key)
            if key.endswith("per_s"):
                assert float(f"{number:.3g}") == number, (name, key, number)
                seen.add(key)
    assert {"wall_s", "rows_per_s", "puzzles_per_s"} <= seen
    scored = CliRunner().invoke(app, ["report", f"{out}.parquet", "--json"])
    for key, number in _floats(json.loads(scored.stdout)):
        if key.endswith("per_s"):
            assert float(f"{number:.3g}") == number, (key, number)


COMMANDS_OF_A_FILE = {  # each command that reads puzzle files, with what else it needs
    "solve": [],
    "validate": [],
    "score": [],
    "augment": [],
    "enumerate": ["--limit", "1"],
    "split": ["-o", "SPLITS"],
    "bench": [],
}


@pytest.mark.parametrize("command", COMMANDS_OF_A_FILE)
def test_a_folder_as_input_is_said_as_one(tmp_path, command):
    folder = tmp_path / "puzzles"
    folder.mkdir()
    (folder / "a.csv").write_text("puzzle\n" + DEEP_FOR_MRV + "\n")
    extra = [str(tmp_path / a) if a == "SPLITS" else a for a in COMMANDS_OF_A_FILE[command]]
    done = CliRunner().invoke(app, [command, str(folder), *extra])

    assert done.exit_code == 2, done.output
    assert (
        done.stderr
        == f"error: {folder}: is a folder: pass files, or a glob like '{folder}/*.csv'\n"
    )


def test_report_of_a_folder_is_said_as_one_and_takes_a_quoted_glob(tmp_path):
    done = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert done.exit_code == 2
    assert (
        done.stderr
        == f"error: {tmp_path}: is a folder: pass files, or a glob like '{tmp_path}/*.parquet'\n"
    )
    source = tmp_path / "a.csv"
    source.write_text("puzzle\n" + DEEP_FOR_MRV + "\n")
    assert CliRunner().invoke(app, ["solve", str(source), "-q"]).exit_code == 0
    read = CliRunner().invoke(app, ["report", str(tmp_path / "*.parquet"), "--json"])
    assert read.exit_code == 0, read.output
    assert len(json.loads(read.stdout)["runs"]) == 1


@pytest.mark.parametrize("command", ["solve", "validate", "augment", "enumerate"])
def test_an_output_place_that_cannot_be_written_names_o(tmp_path, monkeypatch, command):
    # an input in a read-only folder: its default output goes beside it, and the run used to
    # fail on the output's lock without a word of -o
    import pipeline.io.sidecars as sidecars

    source = tmp_path / "ro" / "a.csv"
    source.parent.mkdir()
    source.write_text("puzzle\n" + DEEP_FOR_MRV + "\n")
    real = sidecars.os.access
    monkeypatch.setattr(
        sidecars.os, "access", lambda p, mode: Path(p) != source.parent and real(p, mode)
    )  # fmt: skip  (root may write anywhere: a read-only mount)
    done = CliRunner().invoke(app, [command, str(source), *COMMANDS_OF_A_FILE[command]])
    assert done.exit_code == 2, done.output
    assert done.stderr == (f"error: {source.parent}: cannot write the output there (read-only, "
                           "or not yours); give -o a place you can write\n")  # fmt: skip


@pytest.mark.parametrize(
    "text", ["", "puzzle,solution,prediction\n"], ids=["empty", "header alone"]
)
@pytest.mark.parametrize("command", COMMANDS_OF_A_FILE)
def test_an_empty_input_warns_and_exits_0(tmp_path, command, text):
    source = tmp_path / "none.csv"
    source.write_text(text)
    extra = [str(tmp_path / a) if a == "SPLITS" else a for a in COMMANDS_OF_A_FILE[command]]
    done = CliRunner().invoke(app, [command, str(source), *extra])

    assert done.exit_code == 0, done.output
    assert f"warning: {source}: 0 rows\n" in done.stderr
    if command == "validate":  # of nothing: not "clean"
        assert "nothing to validate" in done.stderr and "clean" not in done.stderr


def test_a_slow_jobs_first_batches_are_small_so_its_bar_moves_early():
    # `--rate`'s bar sat at `0.00 rows` for a whole batch of 50,000 rated rows (67 s on
    # forum_hardest): its first batches now hold 32, 64, 128, ... rows
    import pyarrow as pa

    from pipeline.run.parts import ramp_up

    batches = [("a", pa.record_batch({"row": list(range(300))})),
               ("b", pa.record_batch({"row": list(range(300, 400))}))]  # fmt: skip
    cut = list(ramp_up(batches, first=32))
    assert [(key, b.num_rows) for key, b in cut] == [("a", 32), ("a", 64), ("a", 128), ("a", 76),
                                                     ("b", 100)]  # fmt: skip
    rows = [r for _, b in cut for r in b.column(0).to_pylist()]
    assert rows == list(range(400))  # the same rows, in order


def test_a_node_budget_for_a_solver_from_outside_is_refused_not_ignored(tmp_path):
    source = tmp_path / "a.txt"
    source.write_text(DEEP_FOR_MRV + "\n")
    spec = f"cmd:{sys.executable} -c pass"
    done = CliRunner().invoke(app, ["solve", str(source), "--solver", spec, "--max-nodes", "5"])
    assert done.exit_code == 2
    assert done.stderr.startswith("error: --max-nodes is the built-in strategies' node budget")
    builtin = CliRunner().invoke(app, ["solve", str(source), "--solver", "mrv", "--max-nodes",
                                       "5", "-o", str(tmp_path / "o.csv")])  # fmt: skip
    assert builtin.exit_code == 0, builtin.output  # a strategy named as a solver: its budget
