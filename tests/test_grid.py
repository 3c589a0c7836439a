"""Examples of pipeline.grid: puzzles as text in, `(n, 81) uint8` grids out, and back.

A grid lists its 81 cells row by row: 0 is a blank cell, 1..9 a given digit (a clue).
"""

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pipeline.grid import (
    ParsedGrids,
    as_grid,
    clue_counts,
    format_grids,
    parse_puzzles,
    to_rows,
    to_string,
)

# The classic puzzle from Wikipedia's Sudoku page (30 clues), in the shapes people hold it.
PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
ROW_STRINGS = ["53..7....", "6..195...", ".98....6.", "8...6...3", "4..8.3..1",
               "7...2...6", ".6....28.", "...419..5", "....8..79"]  # fmt: skip
LEETCODE_BOARD = [list(row) for row in ROW_STRINGS]
INT_ROWS = [[0 if c == "." else int(c) for c in row] for row in ROW_STRINGS]
GRID = np.array([0 if c == "." else int(c) for c in PUZZLE], dtype=np.uint8)


# ---- one board: as_grid, to_rows, to_string -------------------------------------------------


@pytest.mark.parametrize(
    "board",
    [
        PUZZLE,  # 81 characters, "." for blanks
        PUZZLE.replace(".", "0"),  # "0" for blanks
        "  " + PUZZLE + "\n",  # whitespace around is ignored
        ROW_STRINGS,  # 9 strings of 9
        tuple(ROW_STRINGS),
        LEETCODE_BOARD,  # 9 lists of 9 one-character strings
        INT_ROWS,  # 9 lists of 9 ints, 0 for blanks
        list(PUZZLE),  # 81 one-character strings
        [int(c) for c in PUZZLE.replace(".", "0")],  # 81 ints
        np.array(INT_ROWS),  # numpy (9, 9) of ints
        GRID,  # numpy (81,) uint8: already a grid
        np.array(LEETCODE_BOARD),  # numpy (9, 9) of one-character strings
        np.array(ROW_STRINGS),  # numpy (9,) of 9-character strings
    ],
    ids=lambda board: type(board).__name__,
)
def test_as_grid_accepts_every_usual_board_shape(board):
    grid = as_grid(board)
    assert grid.dtype == np.uint8 and grid.shape == (81,)
    np.testing.assert_array_equal(grid, GRID)


@pytest.mark.parametrize(
    ("board", "message"),
    [
        (PUZZLE[:-1], "expected 81 cells, got 80"),
        (PUZZLE[:4] + "x" + PUZZLE[5:], "stray character 'x' at cell 4"),
        (ROW_STRINGS[:8], "expected 9 rows or 81 cells, got 8"),
        (ROW_STRINGS[:2] + ["53..7..."] + ROW_STRINGS[3:], "row 3: expected 9 cells, got 8"),
        ([*INT_ROWS[:8], [0, 0, 0, 0, 0, 0, 0, 0, 10]], "cell 80 is 10, expected 0"),
        ([*INT_ROWS[:8], [-1, 0, 0, 0, 0, 0, 0, 0, 0]], "cell 72 is -1, expected 0"),
        ([*LEETCODE_BOARD[:8], list("........a")], "stray character 'a' at cell 80"),
        ([[1.5] * 9] * 9, "cell 0 is 1.5"),
        (np.zeros((3, 27), np.uint8), r"shape \(9, 9\) or \(81,\), got \(3, 27\)"),
        (np.full(81, 10), "cell 0 is 10"),
        (np.zeros(9, np.int64), r"shape \(9,\) holds 9 row strings, got dtype int64"),
    ],
)
def test_as_grid_says_what_is_wrong(board, message):
    with pytest.raises(ValueError, match=message):
        as_grid(board)


@pytest.mark.parametrize(
    ("board", "message"),
    [
        (np.zeros(81, np.float64), "expected an array of ints or strings, got dtype float64"),
        (np.zeros((9, 9), np.bool_), "got dtype bool"),
        (None, "expected a Sudoku board, got NoneType"),
        (42, "expected a Sudoku board, got int"),
        ({"cells": PUZZLE}, "expected a Sudoku board, got dict"),
        (PUZZLE.encode(), "got bytes: decode it to a str first"),
        ([*ROW_STRINGS[:8], None], "row 9: expected 9 cells, got NoneType"),
    ],
)
def test_as_grid_raises_type_error_for_what_is_not_a_board_at_all(board, message):
    with pytest.raises(TypeError, match=message):
        as_grid(board)


def test_to_rows_gives_the_leetcode_board_and_to_string_the_81_characters():
    assert to_rows(GRID) == LEETCODE_BOARD
    assert to_string(GRID) == PUZZLE
    assert to_string(GRID, blank="0") == PUZZLE.replace(".", "0")
    np.testing.assert_array_equal(as_grid(to_rows(GRID)), GRID)


# ---- a column of puzzles: parse_puzzles ----------------------------------------------------


def test_parse_puzzles_gives_grids_ok_flags_and_null_errors_for_good_rows():
    parsed = parse_puzzles([PUZZLE, SOLUTION])
    assert isinstance(parsed, ParsedGrids)
    assert parsed.grids.dtype == np.uint8 and parsed.grids.shape == (2, 81)
    np.testing.assert_array_equal(parsed.grids[0], GRID)
    assert to_string(parsed.grids[1]) == SOLUTION
    assert parsed.ok.tolist() == [True, True]
    assert parsed.errors.type == pa.string()
    assert parsed.errors.to_pylist() == [None, None]


def test_blanks_may_be_dots_or_zeros_and_whitespace_around_is_ignored():
    rows = [PUZZLE, PUZZLE.replace(".", "0"), f" \t{PUZZLE}\r\n", PUZZLE[:40] + "0" + PUZZLE[41:]]
    parsed = parse_puzzles(rows)
    assert parsed.ok.all()
    for grid in parsed.grids:
        np.testing.assert_array_equal(grid, GRID)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "missing puzzle"),
        ("", "expected 81 cells, got 0"),
        (PUZZLE[:-1], "expected 81 cells, got 80"),
        (PUZZLE + "5", "expected 81 cells, got 82"),
        (PUZZLE[:4] + "x" + PUZZLE[5:], "stray character 'x' at cell 4"),
        (PUZZLE[:80] + "x", "stray character 'x' at cell 80"),
        (PUZZLE[:9] + " " + PUZZLE[10:], "stray character ' ' at cell 9"),  # space inside
        (PUZZLE[:2] + "\t" + PUZZLE[3:], "stray character '\\t' at cell 2"),  # shown as repr
        (PUZZLE[:2] + "'" + PUZZLE[3:], 'stray character "\'" at cell 2'),
        (PUZZLE[:2] + "/" + PUZZLE[3:], "stray character '/' at cell 2"),  # just below '0'
        (PUZZLE[:2] + ":" + PUZZLE[3:], "stray character ':' at cell 2"),  # just above '9'
        (PUZZLE[:2] + "-" + PUZZLE[3:], "stray character '-' at cell 2"),  # just below '.'
        ("x" * 81, "stray character 'x' at cell 0"),  # only the first stray one is named
        (PUZZLE[:4] + "é" + PUZZLE[5:], "stray character 'é' at cell 4"),  # 81 chars, 82 bytes
        (PUZZLE[:4] + "é" + PUZZLE[6:], "expected 81 cells, got 80"),  # 81 bytes, 80 chars
        (" " + PUZZLE[1:], "expected 81 cells, got 80"),  # 81 bytes, trimmed first
        (PUZZLE[:80] + "\n", "expected 81 cells, got 80"),
    ],
)
def test_each_bad_row_gets_one_clear_error(text, message):
    parsed = parse_puzzles([text])
    assert parsed.errors.to_pylist() == [message]
    assert parsed.ok.tolist() == [False]
    assert not parsed.grids.any()  # bad rows are all zeros


def test_only_dots_and_digits_are_cells():
    # Every ASCII character at cell 9: the fast byte arithmetic must agree with this rule.
    chars = [chr(code) for code in range(128)]
    parsed = parse_puzzles([PUZZLE[:9] + c + PUZZLE[10:] for c in chars])
    accepted = [c for c, ok in zip(chars, parsed.ok, strict=True) if ok]
    assert accepted == list(".0123456789")
    assert parsed.grids[parsed.ok, 9].tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_mixed_good_and_bad_rows_keep_row_count_and_order():
    rows = [PUZZLE, None, SOLUTION, PUZZLE[:-1], "  " + SOLUTION, PUZZLE[:3] + "x" + PUZZLE[4:]]
    parsed = parse_puzzles(rows)
    assert parsed.grids.shape == (6, 81)
    assert parsed.ok.tolist() == [True, False, True, False, True, False]
    assert parsed.errors.to_pylist() == [
        None,
        "missing puzzle",
        None,
        "expected 81 cells, got 80",
        None,
        "stray character 'x' at cell 3",
    ]
    assert format_grids(parsed.grids, mask=parsed.ok).to_pylist() == [
        PUZZLE,
        None,
        SOLUTION,
        None,
        SOLUTION,
        None,
    ]


def test_bad_rows_on_both_sides_of_the_internal_chunk_boundaries():
    n = 20_000  # the byte checks work in chunks of 8192 rows
    bad_rows = [0, 8191, 8192, 16383, 16384, n - 1]
    rows = [SOLUTION] * n
    for i in bad_rows:
        rows[i] = SOLUTION[:80] + "x"
    parsed = parse_puzzles(rows)
    assert np.flatnonzero(~parsed.ok).tolist() == bad_rows
    assert parsed.errors.null_count == n - len(bad_rows)
    assert clue_counts(parsed.grids).tolist().count(81) == n - len(bad_rows)


ROWS = [PUZZLE, None, PUZZLE[:-1]]
EXPECTED_OK = [True, False, False]


@pytest.mark.parametrize(
    "values",
    [
        ROWS,  # a list of str, None for missing
        tuple(ROWS),
        pl.Series(ROWS),
        pl.Series(ROWS, dtype=pl.Categorical),
        pa.array(ROWS, pa.string()),
        pa.array(ROWS, pa.large_string()),
        pa.array(ROWS, pa.string_view()),
        pa.array(ROWS, pa.string()).dictionary_encode(),
        pa.array(["junk", *ROWS], pa.large_string())[1:],  # a slice: the Arrow offset is not 0
        pa.chunked_array([ROWS[:1], [], ROWS[1:]], pa.string()),  # chunks, one of them empty
        np.array(ROWS, dtype=object),  # numpy object array, None for missing
    ],
    ids=lambda values: type(values).__name__,
)
def test_parse_puzzles_takes_lists_polars_pyarrow_and_numpy(values):
    parsed = parse_puzzles(values)
    assert parsed.ok.tolist() == EXPECTED_OK
    np.testing.assert_array_equal(parsed.grids[0], GRID)


def test_numpy_str_arrays_have_no_missing_values():
    parsed = parse_puzzles(np.array([PUZZLE, SOLUTION]))  # dtype <U81
    assert parsed.ok.tolist() == [True, True]


@pytest.mark.parametrize(
    "values",
    [[], pl.Series([], dtype=pl.String), pa.array([], pa.large_string()), np.array([], str)],
    ids=lambda values: type(values).__name__,
)
def test_empty_input_gives_empty_results(values):
    parsed = parse_puzzles(values)
    assert parsed.grids.shape == (0, 81) and parsed.grids.dtype == np.uint8
    assert parsed.ok.shape == (0,)
    assert len(parsed.errors) == 0


def test_a_column_of_nulls_is_all_missing_puzzles():
    parsed = parse_puzzles(pa.nulls(3, pa.string()))
    assert parsed.errors.to_pylist() == ["missing puzzle"] * 3


def test_parse_puzzles_rejects_columns_that_are_not_strings():
    with pytest.raises(TypeError, match="puzzle strings"):
        parse_puzzles(pl.Series([1, 2, 3]))
    with pytest.raises(TypeError, match="1-d array of str"):
        parse_puzzles(np.zeros((2, 81), np.uint8))


# ---- grids back to text: format_grids, clue_counts -----------------------------------------


def test_format_grids_writes_81_character_strings():
    grids = np.stack([GRID, as_grid(SOLUTION)])
    out = format_grids(grids)
    assert out.type == pa.string()
    assert out.to_pylist() == [PUZZLE, SOLUTION]
    assert format_grids(grids, blank="0").to_pylist() == [PUZZLE.replace(".", "0"), SOLUTION]


def test_format_grids_makes_rows_null_where_the_mask_is_false():
    grids = np.stack([GRID, GRID, GRID])
    out = format_grids(grids, mask=np.array([True, False, True]))
    assert out.to_pylist() == [PUZZLE, None, PUZZLE]
    assert out.null_count == 1


def test_format_grids_of_no_grids_is_an_empty_string_array():
    out = format_grids(np.zeros((0, 81), np.uint8))
    assert len(out) == 0 and out.type == pa.string()


@pytest.mark.parametrize(
    ("grids", "kwargs", "message"),
    [
        (np.zeros((2, 80), np.uint8), {}, r"shape \(n, 81\)"),
        (np.full((1, 81), 10, np.uint8), {}, "row 0, cell 0 is 10, expected 0 \\(blank\\) to 9"),
        (np.eye(3, 81, 5, np.int64) * -1, {}, "row 0, cell 5 is -1, expected 0 \\(blank\\) to 9"),
        (np.zeros((1, 81), np.uint8), {"blank": "5"}, "blank must be"),
        (np.zeros((1, 81), np.uint8), {"blank": ".."}, "blank must be"),
        (np.zeros((2, 81), np.uint8), {"mask": np.ones(3, bool)}, "mask must have shape"),
    ],
)
def test_format_grids_says_what_is_wrong(grids, kwargs, message):
    with pytest.raises(ValueError, match=message):
        format_grids(grids, **kwargs)


def test_clue_counts_counts_the_givens_of_each_grid():
    counts = clue_counts(np.stack([GRID, as_grid(SOLUTION), np.zeros(81, np.uint8)]))
    assert counts.dtype == np.int8
    assert counts.tolist() == [30, 81, 0]


# ---- properties ---------------------------------------------------------------------------


@given(
    grids=st.integers(0, 40).flatmap(
        lambda n: arrays(np.uint8, (n, 81), elements=st.integers(0, 9))
    ),
    blank=st.sampled_from(".0"),
)
def test_random_grids_round_trip_through_text(grids, blank):
    text = format_grids(grids, blank=blank)
    parsed = parse_puzzles(text)
    np.testing.assert_array_equal(parsed.grids, grids)
    assert parsed.ok.all() and parsed.errors.null_count == len(grids)
    np.testing.assert_array_equal(clue_counts(parsed.grids), np.count_nonzero(grids, axis=1))


@given(st.lists(st.none() | st.text(alphabet=".0123456789x é\t", min_size=79, max_size=83)))
def test_every_row_is_either_a_grid_or_has_an_error(rows):
    parsed = parse_puzzles(rows)
    assert parsed.grids.shape == (len(rows), 81)
    errors = parsed.errors.to_pylist()
    for row, ok, error, grid in zip(rows, parsed.ok, errors, parsed.grids, strict=True):
        assert ok == (error is None)
        if ok:
            assert to_string(grid, blank="0") == row.strip().replace(".", "0")
        else:
            assert not grid.any()
