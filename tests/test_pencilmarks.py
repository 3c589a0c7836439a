"""Pencilmark puzzles (tdoku's 729-character lines): parsed, found in every input format."""

from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.grid import parse_puzzles
from pipeline.io.opening import read_puzzles
from pipeline.pencilmarks import (
    ALL_CANDIDATES,
    candidates_of,
    format_pencilmarks,
    parse_pencilmark_bytes,
    singles_of,
)

parse_puzzles_marks = partial(parse_puzzles, pencilmarks=True)
PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


def pencilmark_of(puzzle: str) -> str:
    return format_pencilmarks(candidates_of(parse_puzzles_marks([puzzle]).grids))[0]


def test_a_cell_is_nine_places_one_per_digit():
    marks = pencilmark_of(PUZZLE)
    assert len(marks) == 729
    assert marks[:9] == "....5...."  # a given: its digit alone
    assert marks[18:27] == "123456789"  # a blank cell: every digit open
    raw = np.frombuffer(marks.encode(), np.uint8)[None]
    candidates, ok, first_bad = parse_pencilmark_bytes(raw)
    assert ok.all() and first_bad.tolist() == [-1]
    assert candidates[0, 0] == 1 << 4 and candidates[0, 2] == ALL_CANDIDATES


def test_a_pencilmark_row_parses_to_its_candidates_and_its_single_cells():
    marks = pencilmark_of(PUZZLE)
    narrowed = marks[:18] + "12......." + marks[27:]  # cell 2: 1 or 2
    parsed = parse_puzzles_marks([narrowed, PUZZLE, "  " + marks + "\n"])
    assert parsed.ok.tolist() == [True, True, True]
    assert parsed.pencilmark.tolist() == [True, False, True]
    assert parsed.candidates[0, 2] == 0b11
    # the grid of a pencilmark row: the cells with one candidate left (its clues)
    assert (parsed.grids[0] == parse_puzzles_marks([PUZZLE]).grids[0]).all()
    assert (parsed.candidates[1] == candidates_of(parsed.grids[1:2])[0]).all()
    assert parsed.errors.null_count == 3


def test_zero_is_read_as_an_eliminated_digit():
    marks = pencilmark_of(PUZZLE)
    zeros = marks.replace(".", "0")
    assert (
        parse_puzzles_marks([zeros]).candidates == parse_puzzles_marks([marks]).candidates
    ).all()


@pytest.mark.parametrize(
    "position, char, cell, digit",
    [(0, "x", 0, 1), (4, "4", 0, 5), (728, "1", 80, 9), (18 + 3, "5", 2, 4)],
)
def test_a_character_out_of_its_place_makes_the_row_malformed(position, char, cell, digit):
    marks = pencilmark_of(PUZZLE)
    bad = marks[:position] + char + marks[position + 1 :]
    parsed = parse_puzzles_marks([bad, marks])
    assert parsed.ok.tolist() == [False, True]
    message = parsed.errors[0].as_py()
    assert f"stray character {char!r} at cell {cell}" in message
    assert f"digit {digit}" in message
    assert not parsed.grids[0].any() and not parsed.candidates[0].any()


def test_other_lengths_are_malformed_as_before():
    marks = pencilmark_of(PUZZLE)
    parsed = parse_puzzles_marks([marks[:-1], marks + "1", None])
    assert not parsed.ok.any()
    assert parsed.errors.to_pylist()[:2] == ["expected 81 cells, got 728",
                                            "expected 81 cells, got 730"]  # fmt: skip


def test_a_column_of_81_character_puzzles_has_no_candidates():
    parsed = parse_puzzles_marks([PUZZLE, "x"])
    assert parsed.candidates is None and parsed.pencilmark is None


def test_singles_of_and_candidates_of_are_inverse_on_givens():
    grids = parse_puzzles_marks([PUZZLE]).grids
    assert (singles_of(candidates_of(grids)) == grids).all()
    assert singles_of(np.zeros((1, 81), np.uint16)).sum() == 0  # no candidate: not a clue


@pytest.mark.parametrize("kind", ["txt", "csv", "headerless csv", "parquet"])
def test_pencilmark_puzzles_are_found_in_every_input_format(tmp_path, kind):
    marks = [pencilmark_of(PUZZLE), pencilmark_of(PUZZLE.replace("5", ".", 1))]
    if kind == "txt":
        path = tmp_path / "marks.txt"
        path.write_text("# pencilmarks\n" + "\n".join(marks) + "\n")
    elif kind == "csv":
        path = tmp_path / "marks.csv"
        path.write_text("id,candidates\n" + "".join(f"{i},{m}\n" for i, m in enumerate(marks)))
    elif kind == "headerless csv":
        path = tmp_path / "marks.csv"
        path.write_text("".join(f"{i},{m}\n" for i, m in enumerate(marks)))
    else:
        path = tmp_path / "marks.parquet"
        pq.write_table(pa.table({"note": ["a", "b"], "pencilmarks": marks}), path)
    parsed = read_puzzles(path, pencilmarks=True)
    assert parsed.ok.tolist() == [True, True]
    assert parsed.pencilmark.tolist() == [True, True]
    assert parsed.grids[1, 0] == 0 and parsed.grids[0, 0] == 5


def test_a_pencilmark_puzzles_duplicate_key_is_its_candidates():
    from pipeline.jobs.validate.duplicates import row_keys
    from pipeline.jobs.validate.pencilmarks import pencilmark_keys

    marks = pencilmark_of(PUZZLE)
    other = marks[:18] + "1........" + marks[27:]  # same single cells but one, fewer candidates
    narrower = marks[:18] + "12......." + marks[27:]  # same single cells, fewer candidates
    parsed = parse_puzzles_marks([marks, narrower, marks, PUZZLE, other, "x"])
    keys = pencilmark_keys(parsed, row_keys(parsed.grids, parsed.ok))
    rows = [tuple(k) for k in keys.tolist()]
    assert rows[0] == rows[2]  # the same pencilmarks
    assert len({rows[0], rows[1], rows[3], rows[4]}) == 4  # all else differs
    assert rows[5] == (0, 0)  # not a puzzle: no key


def test_a_mixed_batch_is_rated_from_every_rows_candidates():
    """With a pencilmark row in the batch, `solve --rate` rates every row from candidates (a
    plain row's from its givens): the plain rows keep the ratings they have alone."""
    from pipeline.jobs.generate.puzzles import generate
    from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch

    frame = generate(12, seed=3)
    solved = format_pencilmarks(candidates_of(parse_puzzles(frame["solution"][:1]).grids))
    options = SolveOptions(rate=True, rate_samples=4)

    def rated(puzzles: list[str]) -> pa.Table:
        batch = pa.record_batch({"row": pa.array(range(len(puzzles)), pa.int64()),
                                 "puzzle": pa.array(puzzles)})  # fmt: skip
        return solve_record_batch(batch, options)

    alone = rated(list(frame["puzzle"])).select(["difficulty", "grade", "steps"]).to_pylist()
    mixed = rated([*frame["puzzle"], *solved]).select(["difficulty", "grade", "steps"])
    assert mixed.to_pylist()[:-1] == alone
    assert mixed.to_pylist()[-1]["grade"] == "hidden_single"


def test_a_step_that_reads_givens_only_says_a_pencilmark_row_is_not_for_it():
    import pipeline

    marks = pencilmark_of(PUZZLE)
    parsed = parse_puzzles([marks, PUZZLE])
    assert parsed.ok.tolist() == [False, True] and parsed.candidates is None
    assert "pencilmark puzzle (729 characters)" in parsed.errors[0].as_py()
    with pytest.raises(ValueError, match="pencilmark"):
        pipeline.solve_unique(marks)
    assert pipeline.canonical([marks]).to_list() == [None]
