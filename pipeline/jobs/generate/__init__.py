"""The generate job: `puzzles` makes seeded puzzles with unique solutions a chunk at a time
(`generate`, and the complete grids other code and tests draw from); `job` writes a corpus to
a file with progress and a summary (`generate_file`)."""
