"""A result file's run metadata (`sudoku_pipeline`, JSON), checked before the report reads it.

The report reads a few fields of it (rates, wall time, workers, options, versions; for a
`bench` file, one entry of `runs` per dataset x strategy). A file whose metadata is not what
this tool wrote (edited, or written by another program) still has rows worth a report: each
field the report reads that is not of its JSON type is left out, with a note saying which
(`metadata rows_per_s is a string, not a number: ignored`); the rest is used as recorded.

    meta, notes = read_metadata(raw)              # the file's metadata, checked
    entries = run_entries(meta, notes)           # a bench file's runs, by (dataset, strategy)
"""

import copy
import json
import math
from typing import Any

# The fields a report reads, by their path in the metadata, and the JSON type of each.
FIELDS: dict[tuple[str, ...], str] = {
    ("command",): "string",
    ("input", "path"): "string",
    ("started_at",): "string",
    ("wall_s",): "number",
    ("rows_per_s",): "number",
    ("workers",): "whole number",
    ("repeats",): "whole number",
    ("options", "strategy"): "string",
    ("options", "solutions"): "whole number",
    ("options", "max_nodes"): "whole number",
    ("versions", "sudoku_pipeline"): "string",
    ("cpu", "model"): "string",
    ("runs",): "list",
}
# The fields of each entry of a bench file's `runs`.
RUN_FIELDS: dict[tuple[str, ...], str] = {
    ("dataset",): "string",
    ("strategy",): "string",
    ("path",): "string",
    ("wall_s",): "number",
    ("rows_per_s",): "number",
    ("repeats",): "whole number",
    ("solutions",): "whole number",
    ("max_nodes",): "whole number",
}


def _type_of(value: Any) -> str:
    """The JSON type of `value`, as a note names it: `a string`, `an object`."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)  # NaN, Infinity: JSON's extensions, which Python reads
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _is(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list)
    if isinstance(value, bool):
        return False
    if kind == "whole number":
        return isinstance(value, int)
    return isinstance(value, int | float) and math.isfinite(value)  # a number


def checked(
    meta: dict[str, Any], fields: dict[tuple[str, ...], str], notes: list[str], where: str = ""
) -> dict[str, Any]:
    """`meta` without the `fields` that are not of their type (nor the levels above them that
    are not objects), a note in `notes` for each; `where`: the prefix of the fields' names."""
    clean = copy.deepcopy(meta)  # the caller's dict stays as it was
    for path, kind in fields.items():
        level = clean
        for depth, key in enumerate(path):
            value = level.get(key)
            if value is None:
                break
            wanted = kind if depth == len(path) - 1 else "object"
            if not _is(value, wanted):
                name = where + ".".join(path[: depth + 1])
                article = "an" if wanted[0] in "aeiou" else "a"
                notes.append(
                    f"metadata {name} is {_type_of(value)}, not {article} {wanted}: ignored"
                )
                del level[key]
                break
            level = value
    return clean


def read_metadata(raw: bytes | None) -> tuple[dict[str, Any], list[str]]:
    """The metadata of a result file (the bytes stored under `sudoku_pipeline`, or None),
    checked: `checked` with `FIELDS`; and the notes on what was left out."""
    if not raw:
        return {}, []
    try:
        meta = json.loads(raw)
    except ValueError:
        return {}, ["metadata is not JSON: ignored"]
    if not isinstance(meta, dict):
        return {}, [f"metadata is {_type_of(meta)}, not an object: ignored"]
    notes: list[str] = []
    return checked(meta, FIELDS, notes), notes


def run_entries(
    meta: dict[str, Any], notes: list[str]
) -> dict[tuple[str, str], tuple[dict[str, Any], list[str]]]:
    """A bench file's `runs` by (dataset, strategy): each entry checked with `RUN_FIELDS`,
    with its own notes; the notes of an entry that names no run go to `notes`."""
    entries: dict[tuple[str, str], tuple[dict[str, Any], list[str]]] = {}
    for i, entry in enumerate(meta.get("runs") or []):
        if not isinstance(entry, dict):
            notes.append(f"metadata runs[{i}] is {_type_of(entry)}, not an object: ignored")
            continue
        own: list[str] = []
        entry = checked(entry, RUN_FIELDS, own, f"runs[{i}].")
        dataset, strategy = entry.get("dataset"), entry.get("strategy")
        if isinstance(dataset, str) and isinstance(strategy, str):
            entries[(dataset, strategy)] = (entry, own)
        else:
            notes += own
    return entries
