"""Cells count from 0 everywhere: in messages as in the `cells` and `row` columns, so a number
read in a message indexes the puzzle string (and the `cells` list) as it is."""

import re

import numpy as np
import pytest

from pipeline import validate_puzzles
from pipeline.grid import check_grids, parse_puzzles

PUZZLE = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"


@pytest.mark.parametrize("at", [0, 40, 80])
def test_a_stray_character_is_named_by_its_index_in_the_puzzle(at):
    bad = PUZZLE[:at] + "x" + PUZZLE[at + 1 :]
    findings = validate_puzzles([PUZZLE, bad])
    message = findings.filter(code="malformed")["message"].item()
    named = int(re.fullmatch(r"stray character 'x' at cell (\d+)", message).group(1))
    assert bad[named] == "x"
    assert parse_puzzles([bad]).errors[0].as_py() == message


def test_a_bad_cell_of_an_int_grid_is_named_by_its_index():
    grids = np.zeros((2, 81), np.int64)
    grids[1, 40] = 12
    with pytest.raises(ValueError, match=r"^row 1, cell 40 is 12,"):
        check_grids(grids)
