"""bench: the tdoku-style table, a row per dataset x strategy with sane figures, best of N
repeats with the spread shown; the machine, versions and options in its JSON and footer;
reference columns read from a file or measured with tdoku's harness (a stand-in here, the real
one when TDOKU_BENCH names it); its per-puzzle Parquet output is what `report` reads."""

import json
import os
import re
import statistics
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import pipeline
from pipeline.cli import app
from pipeline.errors import InputError
from pipeline.jobs.bench.job import bench
from pipeline.kernels import STRATEGIES
from pipeline.report import render_text, report
from pipeline.results.measures import fixed

ROOT = Path(__file__).resolve().parents[1]
REAL_TDOKU = os.environ.get("TDOKU_BENCH")  # a tdoku build to run for real, when named
HEADER = ["dataset", "strategy", "puzzles", "puzzles/s", "median", "min", "us/puzzle",
          "nodes/puzzle", "guesses/puzzle", "% no guess", "limit"]  # fmt: skip


@pytest.fixture(autouse=True)
def no_tdoku_from_the_environment(monkeypatch):
    """`bench` reads TDOKU_BENCH; the tests say themselves when tdoku runs."""
    monkeypatch.delenv("TDOKU_BENCH", raising=False)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    """Two small inputs in two formats: a CSV with ids and a bad row, and a text file."""
    folder = tmp_path_factory.mktemp("bench")
    easy = pipeline.generate(40, seed=3, clues=30).select("id", "puzzle")
    bad = pl.DataFrame({"id": [99], "puzzle": ["11" + "." * 79]})
    pl.concat([easy, bad]).write_csv(folder / "easy.csv")
    hard = pipeline.generate(30, seed=4)["puzzle"].to_list()
    (folder / "minimal.txt").write_text("# generated, minimal\n" + "\n".join(hard) + "\n")
    return [folder / "easy.csv", folder / "minimal.txt"]


def markdown_rows(text: str, extra: list[str] = ()) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert rows[0] == HEADER + list(extra) and set("".join(rows[1])) <= set("-:|")
    return rows[2:]


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


def test_one_row_per_dataset_and_strategy_with_sane_figures(datasets, tmp_path):
    out = tmp_path / "bench.parquet"
    # not -q: with -o, quiet keeps stdout empty (tests/test_quiet.py)
    run = CliRunner().invoke(app, ["bench", *map(str, datasets), "-o", str(out)])
    assert run.exit_code == 0, run.output
    rows = markdown_rows(run.stdout)
    assert [(r[0], r[1]) for r in rows] == [(d, s) for d in ("easy", "minimal") for s in STRATEGIES]
    for dataset, _, puzzles, best, median, slowest, us, nodes, guesses, no_guess, limit in rows:
        assert number(puzzles) == (41 if dataset == "easy" else 30)
        assert number(best) >= number(median) >= number(slowest) > 0 and number(us) > 0
        assert number(nodes) >= 1 and 0 <= number(guesses) <= number(nodes) - 1 + 1e-9
        assert 0 <= number(no_guess) <= 100 and number(limit) >= 0
        # rows/s is the wall time of whole batches; the kernel alone cannot be slower
        assert number(best) <= 1e6 / number(us) * 1.05
    fast_easy = rows[0]
    assert number(fast_easy[9]) > 50  # 30-clue puzzles: mostly solved by propagation alone
    assert re.search(
        r"puzzles/s: rows over the wall time of solving \(1 worker, kernels loaded "
        r"first\), best of 3 repeats",
        run.stdout,
    )
    assert f"wrote {out}" in run.stderr

    # the per-puzzle file: identified by dataset and strategy, readable by report
    df = pl.read_parquet(out)
    assert df.columns[:3] == ["dataset", "strategy", "row"]
    assert df.group_by("dataset", "strategy", maintain_order=True).len().rows() == [
        (d, s, 41 if d == "easy" else 30) for d in ("easy", "minimal") for s in STRATEGIES
    ]
    assert df.filter(pl.col("dataset") == "easy")["id"].to_list()[-1] == "99"
    rep = report(out)
    assert [r.label for r in rep.runs] == [
        f"{d} / {s}" for d in ("easy", "minimal") for s in STRATEGIES
    ]
    assert [(c["run"], c["baseline"]) for c in rep.comparisons] == [
        ("easy / mrv", "easy / fast"),
        ("easy / backtrack", "easy / fast"),
        ("minimal / mrv", "minimal / fast"),
        ("minimal / backtrack", "minimal / fast"),
    ]
    figures = rep.to_dict()["runs"][0]
    assert figures["metadata"]["rows_per_s"] == pytest.approx(number(fast_easy[3]), rel=1e-3)
    assert figures["metadata"]["command"] == "bench"
    # the same mean, as the table prints it (rounded half up: 1.65 is "1.7")
    assert fixed(figures["stats"]["nodes"]["mean"], 1) == fast_easy[7]
    # report labels a bench run's wall rate for what it is
    assert "(wall, 1 worker, kernels loaded first, best of 3: wall " in render_text(rep)


def test_best_of_the_repeats_with_their_spread(datasets):
    result = bench(datasets[1], strategy="fast", repeats=4)
    (row,) = result.rows
    assert len(row.rates) == 4
    assert row.puzzles_per_s == pytest.approx(max(row.rates), abs=0.1)
    assert (row.median_per_s, row.min_per_s) == (statistics.median(row.rates), min(row.rates))
    cells = markdown_rows(result.to_markdown())[0]
    assert cells[3:6] == [f"{v:,.0f}" for v in (row.puzzles_per_s, row.median_per_s,
                                                 row.min_per_s)]  # fmt: skip
    assert "best of 4 repeats" in result.to_markdown()


def test_machine_versions_and_options_in_json_and_footer(datasets):
    result = bench(datasets[1], strategy="mrv", rows=10, repeats=1, max_nodes=5000)
    data = json.loads(result.to_json())
    meta = data["metadata"]
    assert set(meta["versions"]) >= {"sudoku_pipeline", "python", "numba", "numpy", "polars"}
    assert meta["cpu"]["model"] and meta["cpu"]["count"] >= 1
    assert meta["options"] == {"strategy": "mrv", "solutions": 2, "max_nodes": 5000,
                               "budgets": "mrv 5,000", "rows": 10, "workers": 1,
                               "repeats": 1}  # fmt: skip
    assert data["rows"][0]["rates"] == [data["rows"][0]["puzzles_per_s"]]
    footer = result.to_markdown().split("\n\n", 1)[1]
    assert meta["cpu"]["instructions"].split(", ")[0] in (
        "AVX-512",
        "AVX2",
        "SSE4.2",
        "NEON",
        "none",
    )
    cpu = f"{meta['cpu']['model']} ({meta['cpu']['instructions']})"
    assert f"machine: {cpu}, {meta['cpu']['count']} cores; " in footer
    assert f"numba {meta['versions']['numba']}" in footer
    assert "options: strategy mrv, solutions 2, max_nodes 5000, budgets mrv 5,000, rows 10, " in (
        footer
    )


def test_one_strategy_on_two_workers(datasets):
    result = bench(datasets[1], strategy="fast", workers=2, rows=20, repeats=1)
    (row,) = result.rows
    assert (row.dataset, row.strategy, row.puzzles, row.limit) == ("minimal", "fast", 20, 0)
    assert row.puzzles_per_s > 0 and row.nodes_per_puzzle >= 1
    assert "(2 workers, kernels loaded first)" in result.to_markdown()
    assert json.loads(result.to_json())["rows"][0]["puzzles"] == 20


def test_reference_figures_from_a_file(datasets, tmp_path):
    """The shipped tdoku figures parse; a file's figures fill a column by dataset name (or
    file name), `-` where it has none, with our best as a percentage of it."""
    shipped = ROOT / "benchmarks" / "tdoku_reference.csv"
    from pipeline.jobs.bench.reference import read_reference

    tdoku = read_reference(shipped)
    assert tdoku.label == "tdoku (file)" and tdoku.figures["puzzles3_magictour_top1465"] == 115_000
    assert "2-core AMD EPYC" in tdoku.note

    for path, text in (
        (tmp_path / "ref.csv", "# a note\ndataset,puzzles_per_s\nminimal.txt,50000\n"),
        (tmp_path / "ref.json", json.dumps({"label": "ref", "figures": {"minimal": 50000}})),
    ):
        path.write_text(text)
        result = bench(datasets, strategy="fast", repeats=1, reference=path)
        label = f"{'ref' if path.suffix == '.json' else 'ref'} (file)"
        rows = markdown_rows(result.to_markdown(), [f"{label} puzzles/s", f"% of {label}"])
        easy, minimal = rows
        assert easy[11:] == ["-", "-"]
        assert minimal[11] == "50,000"
        assert minimal[12] == f"{100 * number(minimal[3]) / 50000:,.0f}"
    for text, message in (("dataset,rate\nx,1\n", "want the columns dataset, puzzles_per_s"),
                          ("dataset,puzzles_per_s\nx,fast\n", "is not a number")):  # fmt: skip
        (tmp_path / "bad.csv").write_text(text)
        with pytest.raises(InputError, match=message):
            bench(datasets, reference=tmp_path / "bad.csv")
    run = CliRunner().invoke(app, ["bench", str(datasets[0]), "--reference", "none.csv"])
    assert run.exit_code == 2 and run.stderr == "error: none.csv: no such reference file\n"


def fake_tdoku(folder: Path, exit_code: int = 0) -> Path:
    """A stand-in for tdoku's run_benchmark: records its arguments and input, prints one CSV
    result line the way the real one does."""
    script = folder / "run_benchmark"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, sys\n"
        "data = pathlib.Path(sys.argv[-1])\n"
        f"log = pathlib.Path({str(folder / 'calls.jsonl')!r})\n"
        "with log.open('a') as f: f.write(json.dumps([sys.argv[1:], data.read_text()]) + '\\n')\n"
        f"if {exit_code}: print('Error during benchmark'); sys.exit({exit_code})\n"
        "print(f'GNU,12.2.0, -O3  -march=native,{data},tdoku,123456.7,8.1,50.0,0.5')\n"
    )
    script.chmod(0o755)
    return script


def test_tdoku_measured_on_the_same_puzzles(datasets, tmp_path):
    script = fake_tdoku(tmp_path)
    run = CliRunner().invoke(
        app, ["bench", str(datasets[1]), "--strategy", "fast", "--repeats", "2", "-q"],
        env={"TDOKU_BENCH": str(script)},
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    label = "tdoku (measured)"
    (row,) = markdown_rows(run.stdout, [f"{label} puzzles/s", f"% of {label}"])
    assert row[11] == "123,457"
    assert f"{label}: tdoku's run_benchmark here, one core, the same puzzles untransformed" in (
        run.stdout
    )
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert len(calls) == 2  # once per repeat
    args, data = calls[0]
    assert args[:-1] == ["-s", "tdoku", "-c1", "-r0", "-n30", "-t1", "-w1", "-e1"]
    lines = data.splitlines()
    assert "# ALLOWZERO" in lines
    puzzles = [line for line in lines if not line.startswith("#")]
    assert puzzles == pipeline.generate(30, seed=4)["puzzle"].to_list()
    assert not Path(args[-1]).exists()  # the input file is removed afterwards


def test_tdoku_absent_or_failing_is_a_note(datasets, tmp_path):
    result = bench(datasets[1], strategy="fast", repeats=1, tdoku=tmp_path / "nothing")
    assert result.references == []
    assert f"note: tdoku: {tmp_path / 'nothing'} is not an executable file: skipped." in (
        result.to_markdown()
    )
    failing = fake_tdoku(tmp_path, exit_code=1)
    result = bench(datasets[1], strategy="fast", repeats=2, tdoku=failing)
    assert result.rows[0].references == {"tdoku (measured)": None}
    assert "note: tdoku failed on minimal: exit code 1: Error during benchmark." in (
        result.to_markdown()
    )
    assert len((tmp_path / "calls.jsonl").read_text().splitlines()) == 1  # not tried again


def test_the_real_tdoku_when_named():
    """Runs tdoku's own harness when TDOKU_BENCH names a build of it."""
    binary = REAL_TDOKU
    if not binary or not Path(binary).is_file():
        pytest.skip("TDOKU_BENCH does not name a tdoku run_benchmark build")
    hard = pipeline.generate(30, seed=4)["puzzle"].to_list()
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    path = folder / f"bench-real-tdoku-{os.getpid()}.txt"
    path.write_text("\n".join(hard) + "\n")
    try:
        result = bench(path, strategy="fast", repeats=1, tdoku=binary)
    finally:
        path.unlink()
    assert result.notes == []
    (run,) = result.references[0].details[path.stem]
    assert run["puzzles_per_s"] > 1000 and run["build"]


def test_an_output_that_is_somebody_elses_file_is_replaced_only_with_force(datasets, tmp_path):
    out = tmp_path / "bench.parquet"
    pl.DataFrame({"precious": [1, 2, 3]}).write_parquet(out)

    refused = CliRunner().invoke(app, ["bench", str(datasets[0]), "-o", str(out), "--repeats",
                                       "1", "--strategy", "fast", "-q"])  # fmt: skip

    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1, refused.output
    assert "use --force to replace it" in refused.stderr
    assert pl.read_parquet(out)["precious"].to_list() == [1, 2, 3]
    forced = CliRunner().invoke(app, ["bench", str(datasets[0]), "-o", str(out), "--repeats",
                                      "1", "--strategy", "fast", "-q", "--force"])  # fmt: skip
    assert forced.exit_code == 0, forced.output
    assert "dataset" in pl.read_parquet(out).columns
    with pytest.raises(InputError, match="will not write over an input"):
        bench([out], output=out, force=True)


def test_bad_input_is_one_line(datasets, tmp_path):
    with pytest.raises(InputError, match="unknown strategy"):
        bench(datasets, strategy="dlx")
    with pytest.raises(InputError, match="repeats"):
        bench(datasets, repeats=0)
    run = CliRunner().invoke(app, ["bench", str(tmp_path / "none.csv")])
    assert run.exit_code == 2 and run.stderr.count("\n") == 1, run.output
    assert run.stderr.startswith(f"error: {tmp_path / 'none.csv'}: ")


def test_the_output_is_parquet_whatever_its_name_says_or_refused(datasets, tmp_path):
    """`report` reads bench results as Parquet: `-o out.csv` wrote Parquet bytes into a file
    named .csv; now it is one line before any work."""
    result = CliRunner().invoke(app, ["bench", str(datasets[0]), "-o", str(tmp_path / "b.csv")])

    assert result.exit_code == 2
    assert "must be parquet" in result.output
    assert not (tmp_path / "b.csv").exists()


def test_ids_of_any_type_are_kept_as_text(tmp_path):
    """A Parquet dataset whose ids are lists, structs or bytes: bench keeps ids as text, as a
    CSV holds them (`io.text_columns`); the run ended in a traceback, after every measurement."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    puzzles = pipeline.generate(3, seed=5)["puzzle"].to_list()
    for name, ids in {
        "list": pa.array([[1, 2], [3], []], pa.list_(pa.int64())),
        "struct": pa.array([{"a": 1}, {"a": 2}, {"a": 3}]),
        "bytes": pa.array([b"\x00\x01", b"\xff", b""], pa.binary()),
    }.items():
        data = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"id": ids, "puzzle": puzzles}), data)
        out = tmp_path / f"{name}.bench.parquet"

        bench([data], strategy="fast", repeats=1, output=out)

        kept = pl.read_parquet(out)["id"].to_list()
        assert kept == {"list": ["1 2", "3", ""], "struct": ['{"a":1}', '{"a":2}', '{"a":3}'],
                        "bytes": ["0001", "ff", ""]}[name]  # fmt: skip


def test_report_reads_a_bench_file_without_a_note(datasets, tmp_path):
    """bench's own metadata is read back by report as it is: no field ignored as mistyped."""
    out = tmp_path / "bench.parquet"
    bench(datasets[0], strategy="fast", repeats=1, output=out)
    text = render_text(report([out]))
    assert "note:" not in text, text
