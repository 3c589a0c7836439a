"""bench: the tdoku-style table, a row per dataset x strategy with sane figures; its per-puzzle
Parquet output is what `report` reads and compares."""

import json
import re

import polars as pl
import pytest
from typer.testing import CliRunner

import pipeline
from pipeline.cli import app
from pipeline.errors import InputError
from pipeline.jobs.bench import bench
from pipeline.report import report
from pipeline.solver import STRATEGIES

HEADER = ["dataset", "strategy", "puzzles", "puzzles/s", "us/puzzle", "nodes/puzzle",
          "guesses/puzzle", "% no guess", "limit"]  # fmt: skip


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


def markdown_rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert rows[0] == HEADER and set("".join(rows[1])) <= set("-:|")
    return rows[2:]


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


def test_one_row_per_dataset_and_strategy_with_sane_figures(datasets, tmp_path):
    out = tmp_path / "bench.parquet"
    run = CliRunner().invoke(app, ["bench", *map(str, datasets), "-o", str(out), "-q"])
    assert run.exit_code == 0, run.output
    rows = markdown_rows(run.stdout)
    assert [(r[0], r[1]) for r in rows] == [(d, s) for d in ("easy", "minimal") for s in STRATEGIES]
    for dataset, _, puzzles, rate, us, nodes, guesses, no_guess, limit in rows:
        assert number(puzzles) == (41 if dataset == "easy" else 30)
        assert number(rate) > 0 and number(us) > 0
        assert number(nodes) >= 1 and 0 <= number(guesses) <= number(nodes) - 1 + 1e-9
        assert 0 <= number(no_guess) <= 100 and number(limit) >= 0
        # rows/s is the wall time of whole batches; the kernel alone cannot be slower
        assert number(rate) <= 1e6 / number(us) * 1.05
    fast_easy = rows[0]
    assert number(fast_easy[7]) > 50  # 30-clue puzzles: mostly solved by propagation alone
    assert re.search(
        r"puzzles/s: rows over the wall time of solving \(1 worker process", run.stdout
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
    assert figures["stats"]["nodes"]["mean"] == pytest.approx(number(fast_easy[5]), abs=0.05)


def test_one_strategy_on_two_workers(datasets):
    result = bench(datasets[1], strategy="fast", workers=2, rows=20)
    (row,) = result.rows
    assert (row.dataset, row.strategy, row.puzzles, row.limit) == ("minimal", "fast", 20, 0)
    assert row.puzzles_per_s > 0 and row.nodes_per_puzzle >= 1
    assert "2 worker processes" in result.to_markdown()
    assert json.loads(result.to_json())["rows"][0]["puzzles"] == 20


def test_bad_input_is_one_line(datasets, tmp_path):
    with pytest.raises(InputError, match="unknown strategy"):
        bench(datasets, strategy="dlx")
    run = CliRunner().invoke(app, ["bench", str(tmp_path / "none.csv")])
    assert run.exit_code == 2 and run.stderr.count("\n") == 1, run.output
    assert run.stderr.startswith(f"error: {tmp_path / 'none.csv'}: ")
