"""Verdict codes shared by every kernel and by the result schema.

Kernels write these small integers; `VERDICT_NAMES[code]` is the word that lands in the
`verdict` column of the result schema.
"""

SOLVED = 0  # exactly one solution
MULTIPLE = 1  # two or more solutions
UNSOLVABLE = 2  # the givens are consistent but no filling exists
INVALID = 3  # two givens clash in a row, column or box
LIMIT = 4  # the node budget ran out before the search could decide
MALFORMED = 5  # the row is not an 81-cell puzzle (set by parsing, never by a kernel)
FOUND = 6  # a solution was found, uniqueness not checked (`solutions=1`: set by the facade)

VERDICT_NAMES: tuple[str, ...] = (
    "solved",
    "multiple",
    "unsolvable",
    "invalid",
    "limit",
    "malformed",
    "found",
)
