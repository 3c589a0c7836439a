"""Keys that order a split: stable 64-bit hashes of 81-character strings, over whole batches.

A split must be the same on any machine, with any worker count or batch size, and with any
library version: so its keys are computed here, from the bytes of the strings, with
SplitMix64's finaliser (public and fixed: `pipeline.splitmix`), never with a library's hash
(polars' changes between versions). Vectorized with numpy: about 50 ms a million strings.

    group_ids(canonical)            # int64 >= 0: the same for the same canonical form
    keyed(values, seed, domain)     # uint64: a seeded order over distinct values
"""

import numpy as np
import pyarrow as pa

from pipeline.splitmix import GAMMA, mix_array

_WIDTH = 88  # 81 bytes padded to 11 words of 8
GROUP_DOMAIN, GROUP_ORDER, ROW_ORDER = 1, 2, 3  # what a key is for: never two alike


def _start(n: int, seed: int, domain: int) -> np.ndarray:
    first = np.full(n, np.uint64(seed), dtype=np.uint64) * GAMMA
    return mix_array(first ^ np.uint64(domain))


def string_bytes(strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """`(n, 81) uint8`: the bytes of strings that are each 81 characters of ASCII (puzzles,
    solutions, canonical forms). ValueError for any other."""
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    strings = strings.cast(pa.large_string())
    n = len(strings)
    if n == 0:
        return np.zeros((0, 81), np.uint8)
    if strings.null_count:
        raise ValueError("a null where 81 characters were expected")
    offsets = np.frombuffer(strings.buffers()[1], np.int64)[strings.offset : strings.offset + n + 1]
    if not (np.diff(offsets) == 81).all():
        raise ValueError("a string that is not 81 characters long")
    data = np.frombuffer(strings.buffers()[2], np.uint8)
    return data[offsets[0] : offsets[-1]].reshape(n, 81)


def hash_rows(rows: np.ndarray, seed: int, domain: int) -> np.ndarray:
    """uint64 hashes of the rows of an `(n, 81) uint8` array, keyed by `seed` and `domain`."""
    n = rows.shape[0]
    padded = np.zeros((n, _WIDTH), np.uint8)
    padded[:, :81] = rows
    words = padded.view("<u8")
    h = _start(n, seed, domain)
    for column in range(words.shape[1]):
        h = mix_array(h ^ words[:, column].astype(np.uint64))
    return h


def group_ids(canonical: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A group id per canonical form: int64 from 0 to 2**63 - 1, the same for the same form in
    any corpus, with any seed (two forms share one with odds of about n**2 / 2**64)."""
    return (hash_rows(string_bytes(canonical), 0, GROUP_DOMAIN) >> np.uint64(1)).astype(np.int64)


def keyed(values: np.ndarray, seed: int, domain: int) -> np.ndarray:
    """uint64 hashes of integer `values`, keyed by `seed` and `domain`: sorting by them is a
    seeded shuffle of distinct values that no other input changes."""
    h = _start(len(values), seed, domain)
    return mix_array(h ^ np.asarray(values).astype(np.uint64))
