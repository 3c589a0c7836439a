"""The manifest of a split (`DIR/manifest.json`): what a researcher needs to defend the split
in a paper. The counts per split in rows and groups, what was left out and why, the options
and seed, the inputs with their sizes and sha256, the tool's version, and how it was done.
"""

import datetime
import hashlib
import os
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pipeline.io.remote import RemoteFile, remote_digest
from pipeline.io.runinfo import package_version
from pipeline.jobs.split.options import BELOW_RATING, REASONS, SplitOptions
from pipeline.jobs.split.plan import SplitPlan
from pipeline.results.json_numbers import json_text

MANIFEST = "manifest.json"
TOOL = "sudoku-pipeline"
METHOD = (
    "Every row solved with uniqueness proved (two solutions sought). Left out: rows that are not "
    "a puzzle with exactly one solution (malformed, clash, unsolvable, multiple, limit), then "
    "exact repeats of an earlier kept row (compared after parsing; the first in input order is "
    "kept). Kept rows are grouped by canonical (minlex) form, so every disguise of a puzzle "
    "(digits relabelled, rows, bands, columns, stacks permuted, transposed) is in one group; "
    "`group` is a 63-bit hash of that form (splitmix64 over its bytes), the same in any corpus "
    "and for any seed. Groups are ordered by a hash of (seed, group) and cut at the fractions "
    "(largest remainders), within each stratum when stratified (a group's stratum is its first "
    "row's; difficulty and rating: deciles of the groups by value); each group goes whole to one "
    "split. Rows in each split are ordered by a hash of (seed, puzzle). Nothing depends on "
    "worker count, batch size or executor."
)


def sha256_of(path: str | Path) -> str:
    """The sha256 of a file, read in 1 MiB blocks (into one buffer: no new memory a block)."""
    digest = hashlib.sha256()
    block = bytearray(1 << 20)
    view = memoryview(block)
    with open(path, "rb", buffering=0) as f:
        while size := f.readinto(block):
            digest.update(view[:size])
    return digest.hexdigest()


class Digests:
    """The sha256 of files, each computed on one of `threads` threads from when it is handed
    over (`start`), so that hashing overlaps the work still to do: the inputs while they are
    solved, a split's files while the next split is written (hashlib and reading release the
    GIL). `of` waits for the files it asks for, starting those not handed over yet.

        with Digests(2) as digests:
            digests.start([input_path])
            ...
            digests.of([input_path])
    """

    def __init__(self, threads: int = 1) -> None:
        self._pool = ThreadPoolExecutor(max(threads, 1), thread_name_prefix="sha256")
        self._pending: dict[Path, Future[str]] = {}

    def start(self, paths: Iterable[Path]) -> None:
        for path in paths:
            if path not in self._pending:
                self._pending[path] = self._pool.submit(sha256_of, path)

    def put(self, known: dict[Path, str]) -> None:
        """The sha256 of files taken elsewhere (on the workers of a cluster: split on Dask)."""
        for path, digest in known.items():
            done: Future[str] = Future()
            done.set_result(digest)
            self._pending[path] = done

    def of(self, paths: list[Path]) -> list[str]:
        """The sha256 of each of `paths` (OSError as reading them raised it)."""
        self.start(paths)
        return [self._pending[path].result() for path in paths]

    def __enter__(self) -> "Digests":
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=exc[0] is None, cancel_futures=True)


def file_identity(
    path: str, remote: RemoteFile | None = None, digests: Digests | None = None
) -> dict[str, Any]:
    """An input as the manifest names it: its path, and its size and sha256: a local file's
    (read again, by `digests` when given: `local_inputs`), or a URL's (`remote`: hashed as it
    was read, `io.remote.remote_digest`); standard input has neither."""
    entry: dict[str, Any] = {"path": path, "size_bytes": None, "sha256": None}
    if remote is not None:
        size, digest = remote_digest(remote)
        return entry | {"size_bytes": size, "sha256": digest}
    try:
        if Path(path).is_file():
            digest = sha256_of(path) if digests is None else digests.of([Path(path)])[0]
            entry |= {"size_bytes": os.path.getsize(path), "sha256": digest}
    except OSError:
        pass
    return entry


def local_inputs(names: Iterable[str], remotes: Iterable[RemoteFile | None]) -> list[Path]:
    """The inputs that are local files (their sha256 can be taken while they are solved)."""
    return [
        Path(name)
        for name, remote in zip(names, remotes, strict=True)
        if remote is None and Path(name).is_file()
    ]


@dataclass
class SplitManifest:
    """A split's record; `to_json()` is what `manifest.json` holds and `--json` prints."""

    options: dict[str, Any]
    rows_read: int
    rows_kept: int
    left_out: dict[str, int]
    splits: dict[str, dict[str, Any]]
    groups: int
    strata: dict[str, dict[str, int]] = field(default_factory=dict)
    # what the training split (the first) was made into: a subsample, copies (hrm), with the
    # seed that drew them; None when neither was asked
    training: dict[str, Any] | None = None
    # kept rows whose input had a solution column that disagrees with the unique solution
    # (the unique one is written); None when no input has a solution column
    wrong_input_solutions: int | None = None
    inputs: list[dict[str, Any]] = field(default_factory=list)
    output: str | None = None
    files: list[str] = field(default_factory=list)  # what the folder holds beside the manifest
    sha256: dict[str, str] = field(default_factory=dict)  # every file written: its checksum
    wall_s: float | None = None
    rows_per_s: float | None = None
    workers: int | None = None
    executor: str | None = None
    method: str = METHOD
    tool: str = TOOL
    command: str = "split"
    version: str = field(default_factory=package_version)
    created_at: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )

    @classmethod
    def of(
        cls,
        plan: SplitPlan,
        options: SplitOptions,
        rows_read: int,
        settings: dict[str, Any] | None = None,
        **more: Any,
    ) -> "SplitManifest":
        """The manifest of `plan`, made with `options` (and the other `settings`: format,
        max_nodes) from `rows_read` input rows; `more`: the other fields."""
        total = sum(plan.groups.values())
        splits = {}
        for name, fraction in zip(options.names, options.fractions, strict=True):
            splits[name] = {
                "rows": plan.rows[name],
                "groups": plan.groups[name],
                "fraction_asked": fraction,
                "fraction_of_groups": _share(plan.groups[name], total),
            }
        reasons = (*REASONS, BELOW_RATING) if options.min_rating is not None else REASONS
        left_out = {reason: int(plan.left_out.get(reason, 0)) for reason in reasons}
        if options.subsample is not None or options.augment:
            more["training"] = {
                "split": options.names[0],
                "seed": options.seed,
                "subsample": options.subsample,
                "rows_before_subsample": plan.subsampled_from,
                "augment": options.augment,
            } | more.get("training", {})
        return cls(
            options=options.as_dict() | (settings or {}),
            rows_read=rows_read,
            rows_kept=plan.kept_rows,
            left_out=left_out,
            splits=splits,
            groups=sum(plan.groups.values()),
            strata=plan.strata,
            **more,
        )

    def to_json(self) -> str:
        return json_text(asdict(self))

    def describe(self) -> str:
        """The summary sentence the command prints on stderr."""
        shares = ", ".join(
            f"{name} {s['rows']:,} rows ({s['groups']:,} groups"
            + (f", {s['examples']:,} examples" if "examples" in s else "")
            + ")"
            for name, s in self.splits.items()
        )
        out = ", ".join(f"{reason} {n:,}" for reason, n in self.left_out.items() if n)
        wrote = f"\nwrote {self.output}" if self.output else ""
        rate = f" in {self.wall_s:.2f} s ({self.rows_per_s:,.0f} rows/s)" if self.wall_s else ""
        return f"{self.rows_read:,} rows read{rate}: {shares}; left out: {out or 'none'}{wrote}"


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None
