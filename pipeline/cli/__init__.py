"""The `sudoku-pipeline` command line: `commands` (one function per command, each a thin layer
over the Python API) and `shell` (what they share: help, errors, the file jobs' options)."""

from pipeline.cli.commands import app, main

__all__ = ["app", "main"]
