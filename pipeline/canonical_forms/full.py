"""The minlex form of a complete grid whose rows and columns each hold the 9 digits once.

The candidate search of `search.py` splits on every column order at the first row of a
complete grid (its 9 new digits label differently under each of the 6^4 column orders), which
costs ~5 ms a grid. A complete grid needs no such search: when every row and every column is a
permutation of 1..9, then for every variant

* row 0 of the form is 123456789, whichever line comes first, so all variants tie on it;
* the labels are then known: digit d gets 1 + its target column in row 0;
* so for a transpose t, top row r0 and column order C, every other row has a fixed value, and
  the row order only chooses among them: row 1 is one of the 2 other rows of r0's band, row 2
  the last one, and the two other bands come in the order of their smallest rows, each sorted
  (no two rows are equal, as no column repeats a digit).

So the form is the smallest over 2 * 9 * 2 (t, r0, r1) * 1296 (C) of row 1, then of the rest:
row 1 is compared a cell at a time and almost every choice stops at its first or second cell;
the rows after it are built only for the few that tie with or beat the best row 1 (~40 a grid).
Cell 0 of row 1 is 1 + the target column of a top-row column b that the stack order and the
order of target stack 0 fix; it is at least 1 + 3k for b in target stack k, and exactly 4 + its
place for k = 1: whole blocks of 36 or 6 column orders are skipped on that (7,800 orders tried a
grid instead of 46,656: 61 -> 34 us a grid, thread CPU time).
"""

import itertools

import numpy as np

from pipeline.compiled import inline_part, kernel

_NO_ROW = 1 << 40  # larger than any row key (9 labels of 4 bits)


def _column_orders() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`orders[i, j]`: source column of target column j under column order i; `inverse[i]` its
    inverse; `parts[i]` = (stack order, order in target stack 0, 1, 2) as indices of the 6
    permutations of 3 in lexicographic order. i = ((stack * 6 + o0) * 6 + o1) * 6 + o2."""
    perms = list(itertools.permutations(range(3)))
    orders, parts = [], []
    for sp, o0, o1, o2 in itertools.product(range(6), repeat=4):
        inside = (perms[o0], perms[o1], perms[o2])
        orders.append([3 * perms[sp][k] + inside[k][j] for k in range(3) for j in range(3)])
        parts.append((sp, o0, o1, o2))
    orders = np.array(orders, np.int64)
    return orders, np.argsort(orders, axis=1), np.array(parts, np.int64)


_ORDERS, _INVERSE, _PARTS = _column_orders()
_PERM3 = np.array(list(itertools.permutations(range(3))), np.int64)  # as in _column_orders
_POSITION = np.argsort(_PERM3, axis=1)  # _POSITION[p, x]: where permutation p puts x


@kernel
def _row_key(lines: np.ndarray, t: int, row: int, order: np.ndarray, labels: np.ndarray) -> int:
    key = 0
    for j in range(9):
        key = (key << 4) | labels[lines[t, row, order[j]]]
    return key


@kernel
def full_form(lines: np.ndarray, form: np.ndarray, chosen: np.ndarray) -> None:
    """The form of a complete grid (each line of `lines` holds 1..9 once) into `form` (81), and
    one variant giving it into `chosen`: [t, stack order, o0, o1, o2, source row of target rows
    0..8]."""
    best = np.full(9, _NO_ROW, np.int64)  # row keys of the best form so far
    best_row1 = np.full(9, 99, np.int64)
    column_of = np.empty(10, np.int64)  # column of each digit in the top row
    image = np.empty(9, np.int64)  # column in the top row of the digit below each column
    labels = np.empty(10, np.int64)
    keys = np.empty(9, np.int64)
    rows = np.empty(9, np.int64)
    for t in range(2):
        for r0 in range(9):
            for c in range(9):
                column_of[lines[t, r0, c]] = c
            band = r0 // 3
            for r1 in range(3 * band, 3 * band + 3):
                if r1 == r0:
                    continue
                for c in range(9):
                    image[c] = column_of[lines[t, r1, c]]
                for sp in range(6):
                    for o0 in range(6):
                        # Cell 0 of row 1 is 1 + the target column of the top-row column b
                        # holding its digit: at least 1 + 3k, k the target stack of b.
                        b = image[3 * _PERM3[sp, 0] + _PERM3[o0, 0]]
                        k = _POSITION[sp, b // 3]
                        if 1 + 3 * k > best_row1[0]:
                            continue
                        for o1 in range(6):
                            if k == 1 and 4 + _POSITION[o1, b % 3] > best_row1[0]:
                                continue
                            for o2 in range(6):
                                i = ((sp * 6 + o0) * 6 + o1) * 6 + o2
                                if _row1_not_worse(image, i, best_row1):
                                    _try_order(
                                        lines,
                                        t,
                                        r0,
                                        r1,
                                        i,
                                        best,
                                        best_row1,
                                        chosen,
                                        labels,
                                        keys,
                                        rows,
                                    )
    for r in range(9):
        for j in range(9):
            form[9 * r + j] = (best[r] >> (4 * (8 - j))) & 15
    for j in range(9):
        form[j] = j + 1


@inline_part
def _row1_not_worse(image: np.ndarray, i: int, best_row1: np.ndarray) -> bool:
    """Whether row 1 under column order i (cell j: 1 + target column of its digit in row 0)
    is at most the best row 1 so far."""
    for j in range(9):
        value = 1 + _INVERSE[i, image[_ORDERS[i, j]]]
        if value != best_row1[j]:
            return value < best_row1[j]
    return True


@kernel
def _try_order(
    lines: np.ndarray,
    t: int,
    r0: int,
    r1: int,
    i: int,
    best: np.ndarray,
    best_row1: np.ndarray,
    chosen: np.ndarray,
    labels: np.ndarray,
    keys: np.ndarray,
    rows: np.ndarray,
) -> None:
    """The form of the variants with transpose t, rows r0, r1 on top and column order i (the
    best order of the other rows); kept in `best` (row keys), `best_row1` (row 1's cells) and
    `chosen` if smaller. `labels`, `keys` and `rows` are scratch."""
    band = r0 // 3
    r2 = 3 * band + 3 - r0 % 3 - r1 % 3  # the third row of the band
    order = _ORDERS[i]
    for c in range(9):
        labels[lines[t, r0, order[c]]] = c + 1
    keys[0] = _row_key(lines, t, r0, order, labels)
    keys[1] = _row_key(lines, t, r1, order, labels)
    keys[2] = _row_key(lines, t, r2, order, labels)
    rows[0], rows[1], rows[2] = r0, r1, r2
    first_band = True
    for other in range(3):
        if other == band:
            continue
        at = 3 if first_band else 6
        first_band = False
        for k in range(3):
            rows[at + k] = 3 * other + k
            keys[at + k] = _row_key(lines, t, 3 * other + k, order, labels)
        _sort_three(keys, rows, at)
    if keys[6] < keys[3]:  # the band with the smaller first row comes first
        for k in range(3):
            keys[3 + k], keys[6 + k] = keys[6 + k], keys[3 + k]
            rows[3 + k], rows[6 + k] = rows[6 + k], rows[3 + k]
    for k in range(1, 9):
        if keys[k] != best[k]:
            if keys[k] < best[k]:
                # element by element: a slice assigned from an array compiles numba's
                # shape-mismatch message (str, repr, f-strings), 1.7 of this kernel's 4.7 CPU s
                for j in range(9):
                    best[j] = keys[j]
                    best_row1[j] = (keys[1] >> (4 * (8 - j))) & 15
                    chosen[5 + j] = rows[j]
                chosen[0] = t
                for j in range(4):
                    chosen[1 + j] = _PARTS[i, j]
            return


@kernel
def _sort_three(keys: np.ndarray, rows: np.ndarray, at: int) -> None:
    """Sort keys[at:at + 3] ascending, moving rows[at:at + 3] along."""
    for a in range(at, at + 2):
        for b in range(at + 2, a, -1):
            if keys[b] < keys[b - 1]:
                keys[b], keys[b - 1] = keys[b - 1], keys[b]
                rows[b], rows[b - 1] = rows[b - 1], rows[b]
