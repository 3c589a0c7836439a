"""Splitting a corpus for learning: train/val/test splits without leaks, at corpus scale.

* `options`: what a split is asked for (fractions, names, seed, stratum), checked once;
* `batch`: one batch solved, grouped and narrowed to what a split keeps (a worker's unit);
* `hashing`: the stable keys that order groups and rows (the same on any machine or version);
* `plan`: the split of the kept rows (repeats out, groups whole, shares per stratum);
* `manifest`: what a split records to be defended; `folder`: its output folder;
* `job`: the split job over files (`split_file`); `frame`: its twin for frames (`split`).
"""

from pipeline.jobs.split.frame import Splits, split
from pipeline.jobs.split.job import split_file
from pipeline.jobs.split.manifest import SplitManifest

__all__ = ["SplitManifest", "Splits", "split", "split_file"]
