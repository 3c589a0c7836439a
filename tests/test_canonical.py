"""Canonical (minlex) forms: same form for every disguise, the smallest one, checked against an
exhaustive reference and against the 17-clue catalogue (printed in this form)."""

import itertools

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from pipeline.canonical_forms import canonical, canonical_grids, canonical_symmetries
from pipeline.grid import format_grids, parse_puzzles, to_string
from pipeline.jobs.generate.puzzles import random_full_grids, remove_givens
from pipeline.symmetry import random_symmetries
from tests.conftest import shared_puzzles

# A 17-clue puzzle exactly as the catalogue prints it, so: in its own form.
SEVENTEEN = ".................1.....2.3......3.2...1.4......5....6..3......4.7..8...962...7..."
# The same puzzle transposed, bands reversed and digits relabelled 1<->9, 2<->8, ...
DISGUISED = "...........78.4....9....61..............6..2...87....3........4......738....95..."


def _line_orders() -> np.ndarray:
    """All 1296 orders of 9 lines that keep bands (or stacks) together: (1296, 9)."""
    orders = []
    for bands in itertools.permutations(range(3)):
        for inside in itertools.product(itertools.permutations(range(3)), repeat=3):
            orders.append([3 * bands[b] + inside[b][j] for b in range(3) for j in range(3)])
    return np.array(orders, np.int64)


LINE_ORDERS = _line_orders()


@njit(cache=True)
def _brute_force_kernel(grid: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """The definition, by exhaustion: every transpose, row order and column order, relabelled
    in order of first appearance, the smallest string kept (stops reading a variant as soon as
    it is larger than the best so far)."""
    best = np.full(81, 99, np.int64)
    variant = np.empty(81, np.int64)
    labels = np.empty(10, np.int64)
    for transpose in range(2):
        cells = np.empty(81, np.int64)
        for r in range(9):
            for c in range(9):
                cells[9 * r + c] = grid[9 * c + r] if transpose else grid[9 * r + c]
        for rows in orders:
            for columns in orders:
                labels[:] = 0
                next_label = 1
                smaller = False
                for k in range(81):
                    d = cells[9 * rows[k // 9] + columns[k % 9]]
                    if d != 0:
                        if labels[d] == 0:
                            labels[d] = next_label
                            next_label += 1
                        d = labels[d]
                    variant[k] = d
                    if not smaller:
                        if d > best[k]:
                            break
                        smaller = d < best[k]
                else:
                    if smaller:
                        best[:] = variant
    return best


def brute_force_form(grid: np.ndarray) -> np.ndarray:
    return _brute_force_kernel(np.asarray(grid, np.int64), LINE_ORDERS).astype(np.uint8)


def grid_of(text: str) -> np.ndarray:
    return parse_puzzles([text]).grids[0]


def form_of(grid: np.ndarray) -> np.ndarray:
    return canonical_grids(np.asarray(grid, np.uint8).reshape(1, 81))[0]


def diagonal_grid() -> np.ndarray:
    """Digits 1..9 down the main diagonal: the same under transposing and many band moves."""
    grid = np.zeros(81, np.uint8)
    grid[np.arange(9) * 10] = np.arange(1, 10)
    return grid


def most_symmetric_full_grid() -> np.ndarray:
    """The shifted-rows solution grid, with a large automorphism group."""
    r, c = np.divmod(np.arange(81), 9)
    return ((3 * (r % 3) + r // 3 + c) % 9 + 1).astype(np.uint8)


def latin_square() -> np.ndarray:
    """Rows and columns each hold 1..9, boxes do not: complete, though not a Sudoku."""
    r, c = np.divmod(np.arange(81), 9)
    return ((r + c) % 9 + 1).astype(np.uint8)


def test_a_catalogue_puzzle_is_its_own_form_and_its_disguise_gets_it():
    assert to_string(form_of(grid_of(SEVENTEEN))) == SEVENTEEN
    assert to_string(form_of(grid_of(DISGUISED))) == SEVENTEEN


@pytest.mark.parametrize(
    "grid",
    [
        np.zeros(81, np.uint8),
        grid_of("." * 40 + "7" + "." * 40),
        grid_of("5" + "." * 79 + "5"),
        grid_of("5" + "." * 79 + "6"),
        grid_of("12" + "." * 77 + "21"),  # one digit twice in a row: clashes still get a form
        diagonal_grid(),
        most_symmetric_full_grid(),
        np.full(81, 5, np.uint8),  # every cell the same digit
        latin_square(),
        np.tile(np.arange(1, 10, dtype=np.uint8), 9),  # every row 123456789
        grid_of(SEVENTEEN),
    ],
    ids=[
        "empty",
        "one",
        "two-same",
        "two-differ",
        "clash",
        "diagonal",
        "full",
        "all-5",
        "latin",
        "same-rows",
        "17",
    ],
)
def test_matches_the_exhaustive_definition_on_puzzles_with_many_ties(grid):
    assert (form_of(grid) == brute_force_form(grid)).all()


@settings(max_examples=20, deadline=None)
@given(
    cells=st.lists(st.integers(0, 80), min_size=1, max_size=9, unique=True),
    digits=st.lists(st.integers(1, 3), min_size=9, max_size=9),
)
def test_matches_the_exhaustive_definition_on_sparse_grids(cells, digits):
    """A few givens of few digits: many variants tie on long prefixes, repeats everywhere."""
    grid = np.zeros(81, np.uint8)
    grid[cells] = digits[: len(cells)]
    assert (form_of(grid) == brute_force_form(grid)).all()


def test_matches_the_exhaustive_definition_on_generated_puzzles():
    rng = np.random.default_rng(11)
    solutions = random_full_grids(3, rng)
    puzzles = remove_givens(solutions, rng, clues=24)
    for grid in [*puzzles, *solutions]:
        assert (form_of(grid) == brute_force_form(grid)).all()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), clues=st.integers(17, 81))
def test_every_disguise_of_a_puzzle_has_the_same_form(seed, clues):
    rng = np.random.default_rng(seed)
    solutions = random_full_grids(4, rng)
    puzzles = solutions if clues == 81 else remove_givens(solutions, rng, clues=clues)
    forms = canonical_grids(puzzles)
    for _ in range(3):
        assert (canonical_grids(random_symmetries(puzzles, rng)) == forms).all()


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), givens=st.integers(0, 81), digits=st.integers(1, 9))
def test_any_grid_of_0_to_9_has_the_same_form_in_every_disguise(seed, givens, digits):
    """Clashing givens, few distinct digits, any density: the form is still invariant."""
    rng = np.random.default_rng(seed)
    grids = np.zeros((8, 81), np.uint8)
    for grid in grids:
        grid[rng.choice(81, givens, replace=False)] = rng.integers(1, digits + 1, givens)
    forms = canonical_grids(grids)
    assert (canonical_grids(random_symmetries(grids, rng)) == forms).all()


def test_forms_of_symmetric_grids_are_invariant_too():
    rng = np.random.default_rng(5)
    grids = np.stack([np.zeros(81, np.uint8), diagonal_grid(), most_symmetric_full_grid()])
    forms = canonical_grids(grids)
    for _ in range(5):
        assert (canonical_grids(random_symmetries(grids, rng)) == forms).all()


def test_a_form_is_its_own_form():
    rng = np.random.default_rng(2)
    puzzles = remove_givens(random_full_grids(50, rng), rng)
    forms = canonical_grids(puzzles)
    assert (canonical_grids(forms) == forms).all()


def test_the_symmetry_returned_is_one_and_gives_the_form():
    """So the form is a disguise of its puzzle: different forms mean different puzzles."""
    rng = np.random.default_rng(8)
    solutions = random_full_grids(30, rng)
    grids = np.concatenate([remove_givens(solutions, rng), solutions, np.zeros((1, 81), np.uint8)])
    forms, cells, relabel = canonical_symmetries(grids)
    assert (forms == canonical_grids(grids)).all()
    for grid, form, where, labels in zip(grids, forms, cells, relabel, strict=True):
        assert (labels[grid[where]] == form).all()
        assert labels[0] == 0 and sorted(labels[1:]) == list(range(1, 10))
        rows, columns = np.divmod(where.reshape(9, 9), 9)
        if not (rows == rows[:, :1]).all():  # transposed: rows of the form are columns
            rows, columns = columns, rows
        assert (rows == rows[:, :1]).all() and (columns == columns[:1, :]).all()
        for lines in (rows[:, 0], columns[0, :]):  # bands (stacks) stay together
            assert sorted(lines) == list(range(9))
            assert all(len(set(lines[b : b + 3] // 3)) == 1 for b in (0, 3, 6))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (SEVENTEEN, SEVENTEEN[:77] + "1" + SEVENTEEN[78:]),  # its last given, 7, made a 1
        (SEVENTEEN, SEVENTEEN[:77] + "." + SEVENTEEN[78:]),  # ... or removed
        ("5" + "." * 79 + "5", "5" + "." * 79 + "6"),
        ("5" + "." * 79 + "5", "5" + "." * 8 + "5" + "." * 71),
        (
            to_string(diagonal_grid()),
            to_string(diagonal_grid()).replace("1", "x").replace("2", "1").replace("x", "2"),
        ),  # relabelled: a disguise
        (to_string(diagonal_grid()), "2" + to_string(diagonal_grid())[1:]),
    ],
)
def test_forms_are_equal_exactly_for_disguises(first, second):
    forms = canonical([first, second])
    brute = [brute_force_form(grid_of(text)) for text in (first, second)]
    assert (forms[0] == forms[1]) == bool((brute[0] == brute[1]).all())


def test_the_17_clue_catalogue_is_almost_all_printed_in_this_form():
    """47,653 of its 49,158 lines are their own form. The other 1,505 are printed in another
    form (about half of them in "pattern first" form: the smallest blank/given pattern, then
    the smallest digits on it), always a larger string than ours, and the exhaustive search
    agrees with us on them. All 49,158 are different puzzles, so all forms are different."""
    catalogue = shared_puzzles("puzzles2_17_clue.txt")
    forms = canonical_grids(catalogue)
    differ = np.flatnonzero((forms != catalogue).any(axis=1))
    assert len(differ) <= 1505
    first = (forms[differ] != catalogue[differ]).argmax(axis=1)
    rows = np.arange(len(differ))
    assert (forms[differ][rows, first] < catalogue[differ][rows, first]).all()
    for i in differ[::300]:
        assert (forms[i] == brute_force_form(catalogue[i])).all()
    assert len(np.unique(forms, axis=0)) == len(catalogue)
    rng = np.random.default_rng(17)
    sample = rng.choice(len(catalogue), 5000, replace=False)
    assert (canonical_grids(random_symmetries(catalogue[sample], rng)) == forms[sample]).all()


def test_canonical_takes_every_column_shape_solve_batch_takes():
    texts = [DISGUISED, SEVENTEEN.replace(".", "0")]
    expected = [SEVENTEEN, SEVENTEEN]
    grids = parse_puzzles(texts).grids
    for column in (
        texts,
        pl.Series(texts),
        pa.array(texts),
        pa.chunked_array([texts[:1], texts[1:]], pa.large_string()),
        np.array(texts),
        grids,
        grids.astype(np.int64),
    ):
        result = canonical(column)
        assert result.name == "canonical"
        assert result.dtype == pl.String
        assert result.to_list() == expected


def test_rows_that_do_not_parse_get_null_and_blank_is_chosen():
    result = canonical([SEVENTEEN, "too short", None, "x" * 81, DISGUISED], blank="0")
    assert result.to_list() == [SEVENTEEN.replace(".", "0"), None, None, None,
                                SEVENTEEN.replace(".", "0")]  # fmt: skip


def test_cells_outside_0_to_9_are_refused():
    with pytest.raises(ValueError, match="0 \\(blank\\) to 9"):
        canonical(np.full((1, 81), 10))
    with pytest.raises(ValueError, match="shape"):
        canonical_grids(np.zeros((2, 80), np.uint8))


def test_an_empty_batch_has_no_forms():
    assert canonical([]).to_list() == []
    assert canonical_grids(np.zeros((0, 81), np.uint8)).shape == (0, 81)
    assert format_grids(canonical_grids(np.zeros((0, 81), np.uint8))).to_pylist() == []
