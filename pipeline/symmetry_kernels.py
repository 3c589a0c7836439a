"""Random symmetries of puzzles and their solutions, drawn and applied a whole batch at a time
in one compiled kernel (numba): what `augment` makes its copies with.

A symmetry here is four things, recorded with every copy so that it can be undone; the first
three are 9-digit numbers (int32 codes; `pack` and `unpack` convert), 123456789 changing
nothing:

* `relabel`: digit d of the original is digit number d (from the left) of the code in the
  copy (352981467: 1 becomes 3, 2 becomes 5, ...);
* `rows`: row i of the copy (1-9) is row number i of the code in the original (the bands
  permuted, and the rows inside each band);
* `columns`: column j of the copy is column number j of the code in the original (stacks,
  and the columns inside each stack);
* `transposed`: the copy is then transposed.

That is, with R, r, c the codes' digits, `copy[i, j] = R[original[r[i], c[j]]]`, or,
transposed, `copy[i, j] = R[original[r[j], c[i]]]` (blanks stay blank). Every symmetry of the
board that keeps rows, columns and boxes (2 * 9! * 6^8 of them, the identity included) is
one such four, and each is drawn with the same chance. `apply_symmetries` and
`undo_symmetries` do and undo it in numpy. Codes, not arrays of nine: three int32 columns
cost a Parquet writer next to nothing, where three fixed-size lists of nine cost more than
the puzzles themselves (1.2 us a row, measured).

Measured and kept: the cell map built once per draw and gathered without a branch, copies
compared cell by cell (two copies nearly always differ within their first cells) instead of
hashed, the codes packed here, the parts inlined (`inline_part`: 2.76 against 2.05 M
copies/s, for a first compile of 6 s instead of 3; the draw's parts, `draw_symmetry` and
below, are linked instead, as fast and quicker to compile: `pipeline.splitmix`): together 4x
faster than the first version (0.6 -> 0.16 us a copy, one core). Then the cell map as nine
line starts and nine steps (`_lines`) instead of 81 cells written and read again: 5.15
against 3.8 M copies/s (K = 8, the original kept, into arrays written before; thread CPU
time, the same copies), of which about 80 ns a copy are the 25 draws. Then those 25 draws
made at once, from a stream held in a register, before the shuffles read them (`next_draws`,
then `draw_symmetry` reads them: the same draws as one at a time), and the codes summed from
independent products: 0.18-0.21 against 0.24-0.29 s for 100,000 rows x 8 copies (one core,
the two kernels alternated in one process, 8 runs each; the same outputs). Measured and
dropped: the whole symmetry from two 64-bit draws decoded in mixed radix (9! and 2 * 6^8)
instead of 25 draws, one per Fisher-Yates step: no faster (2.52 against 2.46 M copies/s side
by side on one core): the divisions cost what the mixes did. The puzzle's and the solution's
cells of a copy made in one loop: no faster.

Random streams: copy draws of input row `g` come from one SplitMix64 stream keyed by (seed, g)
alone, so a row's copies are the same whatever batch it is in and whichever worker runs it.
A copy whose puzzle equals one already made for the row (a puzzle with symmetries of its own
has fewer distinct images) is drawn again, up to `attempts` times; when none is new the copy
is dropped and the row marked `short`.
"""

from typing import NamedTuple

import numpy as np

from pipeline.compiled import inline_part, kernel, kernel_part
from pipeline.limits import MAX_COPIES
from pipeline.splitmix import GAMMA, mix
from pipeline.splitmix import modulo as modulo_of
from pipeline.splitmix import scaled as scaled_of
from pipeline.symmetry_codes import PLACES
from pipeline.symmetry_codes import apply_symmetries as apply_symmetries  # re-exported
from pipeline.symmetry_codes import pack as pack
from pipeline.symmetry_codes import undo_symmetries as undo_symmetries
from pipeline.symmetry_codes import unpack as unpack

IDENTITY = 123456789  # the code of the symmetry that changes nothing
ATTEMPTS = 16  # draws per copy before a row is said to have no new image left


DRAWS = 25  # a symmetry's draws: 8 for the digits, 8 for the rows, 8 the columns, 1 to transpose


@inline_part
def next_draws(stream: np.uint64, draws: np.ndarray) -> np.uint64:
    """The stream's next `DRAWS` draws into `draws`, all at once (none waits for the one
    before, as the shuffles would make them wait); returns the stream moved on."""
    for k in range(DRAWS):
        stream += GAMMA
        draws[k] = mix(stream)
    return stream


@inline_part
def _pick(draw: np.uint64, bound: int, modulo: bool) -> int:
    """A draw as an int in [0, bound): `splitmix.modulo` for the streams of ratings,
    `splitmix.scaled` for augment's (each keeps the one its outputs were made with)."""
    return modulo_of(draw, bound) if modulo else scaled_of(draw, bound)


@inline_part
def _shuffle(
    items: np.ndarray, start: int, count: int, draws: np.ndarray, k: int, modulo: bool
) -> None:
    """Fisher-Yates shuffle of `items[start:start + count]` with the draws from `draws[k]`
    on (`count` - 1 of them)."""
    for i in range(count - 1, 0, -1):
        j = _pick(draws[k + count - 1 - i], i + 1, modulo)
        items[start + i], items[start + j] = items[start + j], items[start + i]


@inline_part
def _line_order(
    order: np.ndarray, bands: np.ndarray, draws: np.ndarray, k: int, modulo: bool
) -> None:
    """A random order of the 9 rows (or columns) from the 8 draws at `draws[k]` on: bands
    shuffled, rows shuffled inside each (`bands`: room for 3, so that no draw allocates)."""
    for b in range(3):
        bands[b] = b
    _shuffle(bands, 0, 3, draws, k, modulo)
    for b in range(3):
        for r in range(3):
            order[3 * b + r] = 3 * bands[b] + r
        _shuffle(order, 3 * b, 3, draws, k + 2 + 2 * b, modulo)


@kernel_part
def draw_symmetry(
    draws: np.ndarray,
    relabel: np.ndarray,
    rows: np.ndarray,
    columns: np.ndarray,
    bands: np.ndarray,
    modulo: bool,
) -> bool:
    """One random symmetry of the board, the one symmetry draw of the package (augment's
    copies, the copies a rating is measured over), from its `DRAWS` draws (`next_draws`):
    the digits 1..9 shuffled into `relabel` (9,), an order of the rows into `rows` (9,) and
    of the columns into `columns` (9,) (bands and stacks shuffled, then the lines inside
    each); returns whether to transpose too. `bands`: room for 3; `modulo`: which way a
    draw becomes a small int (`_pick`). A kernel part, linked where it is called (LLVM
    inlines it there): numba's inlining copied the code of each nested call, 55 for the
    step-by-step draw this replaces (`pipeline.splitmix`)."""
    for d in range(9):
        relabel[d] = d + 1
    _shuffle(relabel, 0, 9, draws, 0, modulo)
    _line_order(rows, bands, draws, 8, modulo)
    _line_order(columns, bands, draws, 16, modulo)
    return _pick(draws[24], 2, modulo) == 1


@inline_part
def _lines(
    rows: np.ndarray, columns: np.ndarray, transposed: bool, starts: np.ndarray, steps: np.ndarray
) -> None:
    """Cell (a, b) of the copy shows cell `starts[a] + steps[b]` of the original: row a of
    the copy is a row of the original (`9 * rows[a] + columns[b]`), or, transposed, a column
    (`columns[a] + 9 * rows[b]`)."""
    if transposed:
        for k in range(9):
            starts[k], steps[k] = columns[k], 9 * rows[k]
    else:
        for k in range(9):
            starts[k], steps[k] = 9 * rows[k], columns[k]


@inline_part
def _apply(
    grid: np.ndarray, starts: np.ndarray, steps: np.ndarray, digits: np.ndarray, out: np.ndarray
) -> None:
    """`out[9 * a + b] = digits[grid[starts[a] + steps[b]]]`: a gather and a relabelling, no
    branch."""
    for a in range(9):
        start = starts[a]
        for b in range(9):
            out[9 * a + b] = digits[grid[start + steps[b]]]


@inline_part
def _is_new(puzzles: np.ndarray, kept: np.ndarray, first: int, slot: int) -> bool:
    """Whether the puzzle in `puzzles[slot]` differs from every kept one in `first..slot-1`
    (two copies nearly always differ within their first few cells: no hash pays for itself)."""
    for other in range(first, slot):
        if kept[other]:
            same = True
            for cell in range(81):
                if puzzles[other, cell] != puzzles[slot, cell]:
                    same = False
                    break
            if same:
                return False
    return True


@inline_part
def _code(order: np.ndarray, offset: int) -> np.int32:
    """Nine small numbers as one 9-digit number, `offset` added to each (see `pack`): a sum
    of products that do not wait for each other."""
    code = 0
    for k in range(9):
        code += (int(order[k]) + offset) * PLACES[k]
    return np.int32(code)


@kernel
def augment_kernel(
    puzzles: np.ndarray,
    solutions: np.ndarray,
    groups: np.ndarray,
    seed: np.uint64,
    copies: int,
    keep_original: bool,
    attempts: int,
    offset: int,
    out_puzzles: np.ndarray,
    out_solutions: np.ndarray,
    relabel: np.ndarray,
    rows: np.ndarray,
    columns: np.ndarray,
    transposed: np.ndarray,
    kept: np.ndarray,
    short: np.ndarray,
) -> None:
    """`copies` random symmetries of each puzzle `puzzles[i]` and its solution, with the
    original first when `keep_original`: slot `i * m + c` (m = copies + keep_original) holds
    copy c (the original at c = 0), its symmetry as three 9-digit codes (`pack`) and a flag,
    `kept` False where no new image was found in `attempts` draws (then `short[i]` is True).
    `groups[i]` keys row i's random stream. `offset` is added to every cell written (a blank
    too; a copy not kept stays all 0)."""
    m = copies + (1 if keep_original else 0)
    draws = np.empty(DRAWS, dtype=np.uint64)  # a symmetry's draws, made at once
    bands = np.empty(3, dtype=np.uint8)  # room for a shuffle of bands
    perm = np.empty(9, dtype=np.uint8)
    row_order = np.empty(9, dtype=np.uint8)
    column_order = np.empty(9, dtype=np.uint8)
    digits = np.zeros(10, dtype=np.uint8)
    digits[0] = offset  # a blank stays a blank
    starts = np.empty(9, dtype=np.int64)  # where the copy's lines start in the original
    steps = np.empty(9, dtype=np.int64)  # and how far each cell of a line is from its start
    base = mix(seed + GAMMA)  # the stream of row i starts as `splitmix.stream_start` says
    for i in range(puzzles.shape[0]):
        stream = mix(np.uint64(groups[i]) * GAMMA + base)
        puzzle, solution = puzzles[i], solutions[i]
        first = i * m
        short[i] = False
        slot = first
        if keep_original:
            for cell in range(81):
                out_puzzles[slot, cell] = puzzle[cell] + offset
                out_solutions[slot, cell] = solution[cell] + offset
            relabel[slot] = rows[slot] = columns[slot] = IDENTITY
            transposed[slot] = False
            kept[slot] = True
            slot += 1
        for _ in range(copies):
            kept[slot] = False
            for _attempt in range(attempts):
                stream = next_draws(stream, draws)
                flip = draw_symmetry(draws, perm, row_order, column_order, bands, False)
                for d in range(9):
                    digits[d + 1] = perm[d] + offset
                _lines(row_order, column_order, flip, starts, steps)
                _apply(puzzle, starts, steps, digits, out_puzzles[slot])
                if _is_new(out_puzzles, kept, first, slot):
                    kept[slot] = True
                    break
            if kept[slot]:
                _apply(solution, starts, steps, digits, out_solutions[slot])
                relabel[slot] = _code(perm, 0)
                rows[slot] = _code(row_order, 1)
                columns[slot] = _code(column_order, 1)
                transposed[slot] = flip
            else:
                short[i] = True
                relabel[slot] = rows[slot] = columns[slot] = 0
                transposed[slot] = False
                out_puzzles[slot] = 0
                out_solutions[slot] = 0
            slot += 1


class Copies(NamedTuple):
    """The copies of a batch, slot `i * m + c` for copy c of row i (see `augment_grids`)."""

    puzzles: np.ndarray  # (n * m, 81) uint8
    solutions: np.ndarray  # (n * m, 81) uint8
    relabel: np.ndarray  # (n * m,) int32: 9-digit code, the copy's digits for 1..9
    rows: np.ndarray  # (n * m,) int32: 9-digit code, the original's rows (1-based)
    columns: np.ndarray  # (n * m,) int32: 9-digit code, the original's columns (1-based)
    transposed: np.ndarray  # (n * m,) bool
    kept: np.ndarray  # (n * m,) bool: False where no new image was found
    short: np.ndarray  # (n,) bool: a row with a copy not kept

    def select(self, slots: np.ndarray) -> "Copies":
        """The copies at `slots` (the kept ones, say); `short` stays the rows'."""
        return Copies(*(a[slots] for a in self[:-1]), self.short)


def copies_room(rows: int, m: int) -> Copies:
    """Arrays for the copies of `rows` rows, `m` slots each (`augment_grids`' `room`)."""
    k = rows * m
    return Copies(
        np.empty((k, 81), np.uint8),
        np.empty((k, 81), np.uint8),
        np.empty(k, np.int32),
        np.empty(k, np.int32),
        np.empty(k, np.int32),
        np.empty(k, np.bool_),
        np.empty(k, np.bool_),
        np.empty(rows, np.bool_),
    )


def augment_grids(
    puzzles: np.ndarray,
    solutions: np.ndarray,
    groups: np.ndarray,
    seed: int,
    copies: int,
    keep_original: bool = False,
    attempts: int = ATTEMPTS,
    room: Copies | None = None,
    offset: int = 0,
) -> Copies:
    """`copies` random symmetries of each of `puzzles (n, 81)` and of its solution, drawn from
    the stream of (seed, `groups[i]`), distinct where the puzzle has that many images; the
    original first when `keep_original` (see the module). Slot `i * m + c` holds copy `c` of
    row i, `m = copies + keep_original`.

    `room`: arrays to write into (`copies_room`, for at least n rows), reused batch after
    batch; the copies returned are then views of it. A batch's fresh arrays cost more than the
    copies themselves: the kernel writes 1.3 GB for 1M rows x 8 copies, and every page of a
    new array is zeroed by the system first (measured: 0.21 s a 100,000 rows x 8 copies into
    arrays written before, 0.73 s into new ones).

    `offset`: added to every cell of the copies and of the originals kept (1: HRM's tokens,
    each digit + 1 and a blank 1, made here rather than in one more pass over the copies;
    `_is_new` compares the copies so written alike)."""
    if offset not in (0, 1):
        raise ValueError(f"offset must be 0 or 1, not {offset}")
    puzzles = np.ascontiguousarray(puzzles, dtype=np.uint8).reshape(-1, 81)
    solutions = np.ascontiguousarray(solutions, dtype=np.uint8).reshape(-1, 81)
    groups = np.ascontiguousarray(groups, dtype=np.int64)
    if not (puzzles.shape == solutions.shape and len(groups) == len(puzzles)):
        raise ValueError("puzzles, solutions and groups must have one row each per puzzle")
    if copies < 0 or attempts < 1:
        raise ValueError(f"copies must be >= 0 and attempts >= 1, not {copies}, {attempts}")
    if copies > MAX_COPIES:
        raise ValueError(f"copies must be at most {MAX_COPIES:,}, not {copies:,}")
    n, m = len(puzzles), copies + bool(keep_original)
    if room is None:
        out = copies_room(n, m)
    elif len(room.short) < n or len(room.kept) < n * m:
        raise ValueError(
            f"room for {len(room.short)} rows of {len(room.kept)} slots, not {n} rows of {m} copies"
        )
    else:
        out = Copies(*(a[: n * m] for a in room[:-1]), room.short[:n])
    seed_bits = int(seed) & (2**64 - 1)  # any int: its low 64 bits key the streams
    augment_kernel(
        puzzles,
        solutions,
        groups,
        np.uint64(seed_bits),
        copies,
        bool(keep_original),
        attempts,
        offset,
        *out,
    )
    return out
