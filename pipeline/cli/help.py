"""Help that reads like a Unix tool's, and option values converted without pydantic.

* `Usage: sudoku-pipeline solve [OPTIONS] INPUT...`, each option with a plain metavar (`N`,
  `FILE`, `NAME`, the choices `fast|mrv|backtrack`), no Python types (`Group`, `Command`);
* plain values (text, whole numbers in range, one of the choices) are converted here, without
  importing pydantic (what Typer converts with: 0.1-0.2 s, a third of solving the 3,000-row
  sample); anything else, a bad value included, goes to Typer's own conversion, which says
  what is wrong in its words.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

from typer.core import TyperCommand, TyperGroup

from pipeline.cli.process import fail


def _metavar(param: Any) -> str:
    """A plain metavar: the one declared, else the choices, else N, X, FILE or TEXT."""
    if param.metavar:
        return param.metavar
    described = param.type_descriptor
    if described.is_choice:
        return "|".join(str(getattr(c, "value", c)) for c in described.choices)
    kind = getattr(described, "annotation", str)
    return {int: "N", float: "X", Path: "FILE"}.get(kind, "TEXT")


def _extras(param: Any, ctx: Any) -> str:
    """`[default: ...; at least 1]`, after an option's help."""
    extra = []
    default = param.default if getattr(param, "show_default", None) is not False else None
    if isinstance(default, StrEnum):
        default = default.value
    if default not in (None, False, "") and not callable(default) and not param.required:
        extra.append(f"default: {default}")
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is not None and high is not None and high < 2**62:
        extra.append(f"{low} to {high}")
    elif low is not None:
        extra.append(f"at least {low}")
    return f"  [{'; '.join(extra)}]" if extra else ""


_WHOLE_NUMBER = re.compile(r"0|[1-9][0-9]{0,18}")
_UNSURE = object()  # a value `_plain_value` leaves to Typer


def _plain_value(
    annotation: Any, info: Any, value: Any, ctx: Any, coerce_choice: Callable[..., Any]
) -> Any:
    """`value` converted as Typer would, when that is plain (else `_UNSURE`): a string for
    `str`, a whole number within the bounds for `int`, a choice named exactly for an Enum
    (by Typer's own `coerce_choice`), a list of strings for `list[str]`."""
    if annotation is str and isinstance(value, str):
        return value
    if annotation is int and not getattr(info, "clamp", False):
        if isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value):
            value = int(value)
        if type(value) is int:
            low, high = getattr(info, "min", None), getattr(info, "max", None)
            if (low is None or value >= low) and (high is None or value <= high):
                return value
        return _UNSURE
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        try:
            return coerce_choice(value, choices=tuple(annotation),
                                 case_sensitive=info.case_sensitive, ctx=ctx)  # fmt: skip
        except ValueError:
            return _UNSURE
    if annotation == list[str] and isinstance(value, list | tuple):
        if all(isinstance(v, str) for v in value):
            return list(value)
    return _UNSURE


def _plain_conversions(params: list[Any]) -> None:
    """Give each Typer parameter a conversion of plain values that needs no pydantic (Typer
    builds its own, with pydantic, on first use: it still does for what is not plain)."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer._param_types import coerce_cli_choice
    except ImportError:  # another Typer: its own conversions, as they are
        return

    @dataclass(frozen=True)
    class Plain(RuntimeParam):
        descriptor: Any = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            plain = _plain_value(self.annotation, self.parameter_info, value, ctx,
                                 coerce_cli_choice)  # fmt: skip
            if plain is not _UNSURE:
                return plain
            typer_own = build_runtime_param(self.descriptor)
            return typer_own._coerce_value(value, param=param, ctx=ctx)

    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", False) is not None:
            continue
        if descriptor.file_annotation is None and descriptor.parameter_info.parser is None:
            param._runtime_param = Plain(descriptor.parameter_info, descriptor.annotation,
                                         descriptor)  # fmt: skip


class Group(TyperGroup):
    """The program's group of commands, its own options converted as `Command`'s are."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_conversions(self.get_params(ctx))
        return super().parse_args(ctx, args)


class Command(TyperCommand):
    """A command with plain help and one-line usage errors, `error: ...` with exit code 2."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_conversions(self.get_params(ctx))
        return super().parse_args(ctx, args)

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except Exception as e:  # click's UsageError (Typer keeps its click private)
            if getattr(e, "exit_code", None) != 2 or not hasattr(e, "format_message"):
                raise
            command = " ".join(n for n in (getattr(parent, "info_name", None), info_name) if n)
            fail(f"{e.format_message()} (see {command} --help)")

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = ["[OPTIONS]"]
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = (param.metavar or param.name.upper()) + ("..." if param.nargs != 1 else "")
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            if getattr(param, "hidden", False):
                continue
            text = (getattr(param, "help", None) or "") + _extras(param, ctx)
            if param.param_type_name == "argument":
                arguments.append((param.metavar or param.name.upper(), text))
                continue
            names = ", ".join(sorted(param.opts, key=lambda o: (o.startswith("--"), o)))
            if param.secondary_opts:
                names += " / " + ", ".join(param.secondary_opts)
            elif not param.is_flag:
                names += f" {_metavar(param)}"
            options.append((names, text))
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        with formatter.section("Options"):
            formatter.write_dl(options)
