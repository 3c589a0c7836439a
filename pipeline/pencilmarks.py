"""Pencilmark puzzles: the digits still allowed in each cell, as tdoku reads them.

A pencilmark puzzle is 729 characters: for each of the 81 cells (row-major), 9 characters, one
per digit 1..9; the character for digit `d` is `d` itself when `d` is still allowed there and
`.` when it is eliminated (`0` is read as `.` too, as a blank is in an 81-character puzzle).
So `123456789` is a cell with every digit open and `....5....` a cell holding 5. This is
tdoku's format (`src/all_solvers.h`: `input[row * 81 + col * 9 + digit - 1]`), except that
tdoku takes any character other than `.` for "allowed" where a digit in another digit's place
is a stray character here (a row of it is malformed: shifted text is not a puzzle).

As numbers, a batch of pencilmark puzzles is `(n, 81) uint16` candidate masks, bit `d - 1` for
digit `d` (the solver's `candidates`); its grid (`(n, 81) uint8`) holds the cells with one
candidate left, which are its clues.
"""

import numpy as np

CELLS = 81
PENCILMARK_CHARS = 729  # 9 characters a cell
ALL_CANDIDATES = 0x1FF
_DIGIT_CHARS = np.arange(ord("1"), ord("1") + 9, dtype=np.uint8)  # the char of each place
_BITS = (1 << np.arange(9)).astype(np.uint16)


def parse_pencilmark_bytes(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`(k, 729) uint8` bytes as `(candidates (k, 81) uint16, ok (k,) bool, first_bad (k,)
    int64)`: `first_bad` is the position of the first character that is neither its place's
    digit nor `.`/`0` (-1 where the row is ok); candidates are zeros where it is not."""
    k = len(raw)
    marks = np.asarray(raw, np.uint8).reshape(k, CELLS, 9)
    allowed = marks == _DIGIT_CHARS
    bad = ~(allowed | (marks == ord(".")) | (marks == ord("0")))
    flat = bad.reshape(k, PENCILMARK_CHARS)
    ok = ~flat.any(axis=1)
    first_bad = np.where(ok, -1, flat.argmax(axis=1)).astype(np.int64)
    candidates = (allowed * _BITS).sum(axis=2, dtype=np.uint16)
    candidates[~ok] = 0
    return candidates, ok, first_bad


def singles_of(candidates: np.ndarray) -> np.ndarray:
    """The grid of candidate masks: each cell with exactly one candidate holds that digit,
    every other cell is blank (0)."""
    masks = np.asarray(candidates, np.uint16)
    single = (masks != 0) & ((masks & (masks - 1)) == 0)
    digits = np.zeros(masks.shape, np.uint8)
    digits[single] = np.log2(masks[single]).astype(np.uint8) + 1
    return digits


def candidates_of(grids: np.ndarray) -> np.ndarray:
    """The candidate masks of plain grids: a given digit's bit alone, every digit in a blank."""
    grids = np.asarray(grids, np.uint8)
    masks = np.full(grids.shape, ALL_CANDIDATES, np.uint16)
    given = grids != 0
    masks[given] = (1 << (grids[given].astype(np.uint16) - 1)).astype(np.uint16)
    return masks


def format_pencilmarks(candidates: np.ndarray) -> list[str]:
    """`(n, 81)` candidate masks as 729-character strings (`.` for an eliminated digit)."""
    masks = np.asarray(candidates, np.uint16).reshape(-1, CELLS)
    allowed = (masks[:, :, None] & _BITS) != 0
    chars = np.where(allowed, _DIGIT_CHARS, np.uint8(ord(".")))
    return [row.tobytes().decode("ascii") for row in chars.reshape(-1, PENCILMARK_CHARS)]


def stray_message(text: str, position: int) -> str:
    """Why a 729-character row is not a pencilmark puzzle: its first stray character."""
    cell, place = divmod(position, 9)
    return (
        f"stray character {text[position]!r} at cell {cell} (pencilmark place of digit "
        f"{place + 1}: expected {place + 1} or .)"
    )
