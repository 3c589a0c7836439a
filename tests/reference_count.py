"""An exact solution counter in plain Python, on candidates: the tests' yardstick for the
kernels' counts and for pencilmark puzzles. Slow and obvious: Norvig's eliminate and assign
(a placed digit leaves its peers; a cell with one candidate is placed), then a search on the
cell with the fewest candidates, every digit tried."""

ROWS = [[r * 9 + c for c in range(9)] for r in range(9)]
COLUMNS = [[r * 9 + c for r in range(9)] for c in range(9)]
BOXES = [[(br * 3 + r) * 9 + bc * 3 + c for r in range(3) for c in range(3)]
         for br in range(3) for bc in range(3)]  # fmt: skip
UNITS = ROWS + COLUMNS + BOXES
PEERS = [sorted({p for u in UNITS if cell in u for p in u} - {cell}) for cell in range(81)]
ALL = 0x1FF


def candidates_from_text(puzzle: str) -> list[int]:
    """81 masks (bit d-1: digit d allowed) from an 81-character puzzle or a 729-character
    pencilmark puzzle (`.` or `0` for a blank or an eliminated digit)."""
    if len(puzzle) == 81:
        return [ALL if ch in ".0" else 1 << (int(ch) - 1) for ch in puzzle]
    assert len(puzzle) == 729, len(puzzle)
    return [sum(1 << d for d in range(9) if puzzle[cell * 9 + d] not in ".0")
            for cell in range(81)]  # fmt: skip


def _settle(masks: list[int]) -> bool:
    """Propagate until nothing changes: a cell with one candidate removes it from its peers,
    a digit with one place in a unit goes there. False on a contradiction."""
    changed = True
    while changed:
        changed = False
        for cell in range(81):
            mask = masks[cell]
            if mask == 0:
                return False
            if mask & (mask - 1) == 0:
                for peer in PEERS[cell]:
                    if masks[peer] & mask:
                        masks[peer] &= ~mask
                        if masks[peer] == 0:
                            return False
                        changed = True
        for unit in UNITS:
            for d in range(9):
                bit = 1 << d
                places = [c for c in unit if masks[c] & bit]
                if not places:
                    return False
                if len(places) == 1 and masks[places[0]] != bit:
                    masks[places[0]] = bit
                    changed = True
    return True


def count_solutions(masks: list[int], limit: int) -> int:
    """How many solutions the candidates allow, counted up to `limit`."""
    masks = list(masks)
    if not _settle(masks):
        return 0
    open_cells = [c for c in range(81) if masks[c] & (masks[c] - 1)]
    if not open_cells:
        return 1
    cell = min(open_cells, key=lambda c: bin(masks[c]).count("1"))
    found = 0
    for d in range(9):
        if masks[cell] >> d & 1:
            trial = list(masks)
            trial[cell] = 1 << d
            found += count_solutions(trial, limit - found)
            if found >= limit:
                return found
    return found


def all_solutions(masks: list[int], limit: int) -> list[str]:
    """The solutions themselves (81 digits each), up to `limit`, in no particular order."""
    masks = list(masks)
    if not _settle(masks):
        return []
    open_cells = [c for c in range(81) if masks[c] & (masks[c] - 1)]
    if not open_cells:
        return ["".join(str(m.bit_length()) for m in masks)]
    cell = min(open_cells, key=lambda c: bin(masks[c]).count("1"))
    out: list[str] = []
    for d in range(9):
        if masks[cell] >> d & 1 and len(out) < limit:
            trial = list(masks)
            trial[cell] = 1 << d
            out += all_solutions(trial, limit - len(out))
    return out
