"""Bytes in and out: input formats, the dataset's columns, atomic output files, run metadata.

* `formats`: file kinds, compression, and the readers that stream bytes as Arrow batches;
* `dataset`: an opened input, its puzzle, solution and id columns, batches of bounded size;
* `output`: output paths checked and files written atomically;
* `runinfo`: what every output records about the run that made it.
"""
