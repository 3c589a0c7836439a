"""benchmarks.versus_tdoku with fastdoku beside tdoku: its count-to-2 harness's line parsed, the
same puzzle file handed to it, and a note when it is not named (no fastdoku needed: a stand-in
prints the line the real harness prints)."""

import json
import sys
from pathlib import Path

import pytest

from benchmarks.versus_tdoku import notes, parse_fastdoku, table
from pipeline.grid import parse_puzzles

REAL_LINE = (
    "top1465.txt                          19.213 us       52.0K/s  [1465 puzzles, count-to-2: "
    "1465 unique, 0 multiple, 0 none, auto, 1t, best/20]\n"
)
PUZZLES = parse_puzzles(
    [
        "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......",
        "52...6.........7.13...........4..8..6......5...........418.........3..2...87.....",
    ]
).grids


def test_the_harness_line_gives_puzzles_per_second():
    assert parse_fastdoku(REAL_LINE, 1465) == pytest.approx(1e6 / 19.213)


@pytest.mark.parametrize(
    ("out", "message"),
    [(REAL_LINE, "fastdoku read 1465 puzzles of 1000"), ("thread 'main' panicked\n", "no 'us")],
)
def test_a_line_that_does_not_fit_is_an_error(out, message):
    with pytest.raises(ValueError, match=message):
        parse_fastdoku(out, 1000)


def fake_fastdoku(folder: Path) -> Path:
    """A stand-in for fastdoku-count2: records its arguments and input, prints its line."""
    script = folder / "fastdoku-count2"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, sys\n"
        "data = pathlib.Path(sys.argv[1])\n"
        f"log = pathlib.Path({str(folder / 'calls.jsonl')!r})\n"
        "with log.open('a') as f: f.write(json.dumps([sys.argv[2:], data.read_text()]) + '\\n')\n"
        "n = len(data.read_text().splitlines())\n"
        "print(f'{data.name:<32} {4.0:>10.3f} us {250.0:>10.1f}K/s  [{n} puzzles, count-to-2: "
        "{n} unique, 0 multiple, 0 none, auto, 1t, best/3]')\n"
    )
    script.chmod(0o755)
    return script


def test_fastdoku_beside_ours_on_the_same_puzzles(tmp_path):
    script = fake_fastdoku(tmp_path)
    body = table({"two": PUZZLES}, None, repeats=2, seconds=0.0, fastdoku=str(script))
    header, _, row = body.splitlines()
    assert "| fastdoku puzzles/s | ours / fastdoku |" in header
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:4] == ["two", "2", cells[2], ""]  # tdoku not run
    assert cells[5] == "250,000"
    ours = float(cells[2].replace(",", ""))
    assert float(cells[6]) == pytest.approx(ours / 250_000, abs=0.006)
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert len(calls) == 2  # once a repeat, alternating with ours
    for args, text in calls:
        assert args[:3] == ["--engine", "auto", "--rounds"]
        lines = text.splitlines()
        assert [line.replace(".", "0") for line in lines] == ["".join(map(str, p)) for p in PUZZLES]


def test_a_solver_not_named_is_a_note():
    assert notes("tdoku", None) == (
        "\nFASTDOKU_COUNT2 is not set: fastdoku was not run (its columns are empty).\n"
    )
    assert notes(None, None).count("is not set") == 2
    assert notes("tdoku", "fastdoku") == ""
