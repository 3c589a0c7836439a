"""The bench job: the table tdoku's harness made familiar, for datasets x strategies (`job`),
with reference figures read from a file or measured by tdoku's own `run_benchmark`
(`reference`).

    table = bench(["hardest.txt"], strategy="all")
"""

from pipeline.jobs.bench.job import bench

__all__ = ["bench"]
