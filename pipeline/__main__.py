"""`python -m pipeline`: the `sudoku-pipeline` command, as `python -m pipeline.cli` is."""

if __name__ == "__main__":
    from pipeline.cli import main

    main()
