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
# solvers from outside only (`pipeline.plugins.answers`), never a kernel of ours:
WRONG_ANSWER = 7  # the grid it returned breaks a rule, changes a given or is incomplete
SOLVER_ERROR = 8  # it gave no answer at all (crashed, timed out, said something unreadable)

VERDICT_NAMES: tuple[str, ...] = (
    "solved",
    "multiple",
    "unsolvable",
    "invalid",
    "limit",
    "malformed",
    "found",
    "wrong_answer",
    "solver_error",
)
OUTSIDE_ONLY: tuple[str, ...] = ("wrong_answer", "solver_error")  # never our kernels' verdicts
