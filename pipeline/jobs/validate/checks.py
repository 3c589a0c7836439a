"""The row checks of validation: what each row of a batch is found to be, as findings.

`check_rows` runs on the workers, one batch at a time: parsing (`malformed`), the givens
(`clash`), a search for up to two solutions (`unsolvable`, `multiple`, `limit`), the clue count
(`few_clues`), the input's solution column (`wrong_solution`) and, when asked, minimality
(`not_minimal`). The codes, levels and messages are in `catalogue`.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.grid import MIN_UNIQUE_CLUES, ParsedGrids, clue_counts, format_grids, parse_puzzles
from pipeline.io.dataset import optional_column
from pipeline.jobs.validate.catalogue import FindingsBuilder, cell_lists, cell_name, message
from pipeline.jobs.validate.minimal import removable_givens
from pipeline.kernels import codes


def check_rows(
    batch: pa.RecordBatch, max_nodes: int | None = None, minimal: bool = False
) -> tuple[pa.Table, ParsedGrids]:
    """The row checks of one batch (columns `row`, `puzzle`, optional `id` and `solution`):
    its findings table, and the parsed puzzles for the dataset-wide checks."""
    from pipeline.kernels import find_two_solutions

    rows = batch.column(batch.schema.get_field_index("row")).to_numpy()
    ids = optional_column(batch, "id")
    parsed = parse_puzzles(batch.column(batch.schema.get_field_index("puzzle")), pencilmarks=True)
    marks = np.zeros(len(rows), np.bool_) if parsed.pencilmark is None else parsed.pencilmark
    # with pencilmark rows, every row searched from its candidates (a plain row's: its givens)
    found, seconds = find_two_solutions(
        parsed.grids, max_nodes, skip=~parsed.ok, candidates=parsed.candidates
    )
    verdicts = found.verdicts
    out = FindingsBuilder(rows, ids)

    malformed = np.flatnonzero(~parsed.ok)
    out.add("malformed", malformed, parsed.errors.take(pa.array(malformed)))
    _clashes(out, parsed.grids, np.flatnonzero(verdicts == codes.INVALID))
    unsolvable = np.flatnonzero(verdicts == codes.UNSOLVABLE)
    out.add("unsolvable", unsolvable, message("unsolvable"))
    _multiple(out, found.solutions, seconds, np.flatnonzero(verdicts == codes.MULTIPLE))
    clues = clue_counts(parsed.grids)
    few = np.flatnonzero(parsed.ok & ~marks & (clues < MIN_UNIQUE_CLUES))  # givens only
    out.add("few_clues", few, [message("few_clues", clues=c) for c in clues[few].tolist()])
    out.add(
        "limit",
        np.flatnonzero(verdicts == codes.LIMIT),
        message("limit", budget=_budget(max_nodes), what="uniqueness"),
    )
    expected = optional_column(batch, "solution")
    if expected is not None:
        _wrong_solutions(out, parsed, found.solutions, verdicts == codes.SOLVED, expected)
    if minimal:
        _not_minimal(
            out, parsed.grids, np.flatnonzero((verdicts == codes.SOLVED) & ~marks), max_nodes
        )
    return out.table(), parsed


def _count(n: int, thing: str) -> str:
    """`1 cell`, `2 cells`."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def _budget(max_nodes: int | None) -> str:
    return f"{max_nodes:,}" if max_nodes is not None else "?"


def _clashes(out: FindingsBuilder, grids: np.ndarray, at: np.ndarray) -> None:
    """`clash` findings: where the givens clash, found once, for the message and the cells."""
    from pipeline.kernels.checks import clash_messages, first_clash

    if not len(at):
        return
    clash = first_clash(grids[at])
    pairs = np.stack([clash.cell_a, clash.cell_b], axis=1).astype(np.int8)
    offsets = pa.array(np.arange(0, 2 * len(at) + 1, 2, dtype=np.int32))
    cells = pa.ListArray.from_arrays(offsets, pa.array(pairs.ravel()))
    where = [message("clash", where=w) for w in clash_messages(clash)]
    out.add("clash", at, where, cells=cells)


def _multiple(out: FindingsBuilder, first: np.ndarray, second: np.ndarray, at: np.ndarray) -> None:
    differ = np.count_nonzero(first[at] != second[at], axis=1)
    messages = [message("multiple", cells=d) for d in differ.tolist()]
    out.add(
        "multiple",
        at,
        messages,
        solution_a=format_grids(first[at]),
        solution_b=format_grids(second[at]),
    )


def _wrong_solutions(
    out: FindingsBuilder,
    parsed: ParsedGrids,
    found: np.ndarray,
    unique: np.ndarray,
    expected: pa.Array,
) -> None:
    """`wrong_solution` where the solution column is present and not a valid full grid, changes
    a given, or (for a unique puzzle) differs from the solution found."""
    from pipeline.kernels.checks import clash_messages, first_clash, givens_valid

    present = ~expected.is_null().to_numpy(zero_copy_only=False)
    column = parse_puzzles(expected)
    blanks = np.count_nonzero(column.grids == 0, axis=1)
    valid = column.ok & (blanks == 0) & givens_valid(column.grids)
    given = parsed.grids != 0
    changed = parsed.ok[:, None] & given & (column.grids != 0) & (parsed.grids != column.grids)
    differs = unique[:, None] & (found != column.grids)
    wrong = present & (~valid | changed.any(axis=1) | differs.any(axis=1))
    at = np.flatnonzero(wrong)
    if not len(at):
        return
    full = column.ok & (blanks == 0)
    located = clash_messages(first_clash(column.grids[at[full[at]]]))
    clashes = dict(zip(at[full[at]].tolist(), located, strict=True))
    messages = []
    for i in at.tolist():
        clauses = []
        if not column.ok[i]:
            clauses.append(f"is not a grid ({column.errors[i].as_py()})")
        elif blanks[i]:
            clauses.append(f"is not a full grid ({_count(blanks[i], 'blank cell')})")
        elif not valid[i]:
            clauses.append(f"is not a valid grid ({clashes[i]})")
        cells = np.flatnonzero(changed[i])
        if len(cells):
            c = int(cells[0])
            more = f" (and {_count(len(cells) - 1, 'more given')})" if len(cells) > 1 else ""
            clauses.append(
                f"changes the given {parsed.grids[i, c]} at {cell_name(c)} to "
                f"{column.grids[i, c]}{more}"
            )
        if unique[i]:
            clauses.append(
                f"differs from the unique solution at {_count(differs[i].sum(), 'cell')}"
            )
        if len(clauses) > 1:
            clauses[-1] = "and " + clauses[-1]
        listed = (", " if len(clauses) > 2 else " ").join(clauses)
        messages.append(message("wrong_solution", problems=listed))
    cells = np.where(changed[at].any(axis=1)[:, None], changed[at], differs[at])
    solved = unique[at]
    out.add(
        "wrong_solution",
        at,
        messages,
        cells=cell_lists(cells),
        unique_solution=format_grids(found[at], mask=solved),
        column_solution=expected.take(pa.array(at)).cast(pa.string()),
    )


def _not_minimal(
    out: FindingsBuilder, grids: np.ndarray, at: np.ndarray, max_nodes: int | None
) -> None:
    removable, undecided = removable_givens(grids[at], max_nodes)
    some = removable.any(axis=1)
    hits = at[some]
    messages = []
    for i, cells in zip(hits.tolist(), removable[some], strict=True):
        names = [f"{grids[i, c]} at {cell_name(c)}" for c in np.flatnonzero(cells).tolist()]
        givens = int(np.count_nonzero(grids[i]))
        messages.append(
            message("not_minimal", count=len(names), givens=givens, cells=", ".join(names))
        )
    out.add("not_minimal", hits, messages, cells=cell_lists(removable[some]))
    out.add(
        "limit",
        at[undecided & ~some],
        message("limit", budget=_budget(max_nodes), what="minimality"),
    )


def duplicate_findings(
    rows: np.ndarray,
    first_rows: np.ndarray,
    ids: pa.Array | None = None,
    first_ids: pa.Array | None = None,
    code: str = "duplicate",
) -> pa.Table:
    """`duplicate` (or `symmetry_duplicate`) findings: each of `rows` repeats the puzzle of
    the row in `first_rows` (with that row's id in the message when the input has ids)."""
    out = FindingsBuilder(rows, ids)
    # the catalogue's template, "same puzzle ... row {first_row}", filled a column at a time
    prefix = message(code, first_row="")
    text = pc.binary_join_element_wise(prefix, pa.array(first_rows).cast(pa.string()), "")
    if first_ids is not None:
        first_ids = first_ids.cast(pa.string()).fill_null("null")
        text = pc.binary_join_element_wise(text, " (id ", first_ids, ")", "")
    out.add(code, np.arange(len(rows)), text, first_row=pa.array(first_rows))
    return out.table()
