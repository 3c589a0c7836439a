"""A Dask worker preload for tests/test_dask.py: the worker does not see the client's storage.

`dask worker --preload tests/dask_no_storage.py`: the check each worker makes before a sliced
run (`pipeline.run.sliced.check_storage`) looks at a folder of its own instead of the
client's, as a worker on a machine without the shared file system would.
"""

import tempfile

import pipeline.run.sliced

# Dask may load a preload more than once: wrap the function itself, never a wrapper.
_check_storage = getattr(
    pipeline.run.sliced.check_storage, "__wrapped__", pipeline.run.sliced.check_storage
)
_ELSEWHERE = tempfile.mkdtemp(prefix="not-shared-")


def check_elsewhere(folder, token, inputs):
    return _check_storage(_ELSEWHERE + folder, token, inputs)


check_elsewhere.__wrapped__ = _check_storage
# Functions travel by module and name: the worker looks this one up, and finds the one here.
pipeline.run.sliced.check_storage = check_elsewhere
