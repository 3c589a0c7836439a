"""`python -m pipeline.cli`: the `sudoku-pipeline` command."""

from pipeline.cli.commands import main

main()
