"""Help that reads like a Unix tool's, and option values converted without pydantic.

* `Usage: sudoku-pipeline solve [OPTIONS] INPUT...`, each option with a plain metavar (`N`,
  `FILE`, `NAME`, the choices `fast|mrv|backtrack`), no Python types (`Group`, `Command`);
* plain values (text, whole numbers in range, one of the choices) are converted here, without
  importing pydantic; anything else, a bad value included, goes to Typer's own conversion, which
  says what is wrong in its words. Typers before 0.29 convert with click's types, which need no
  help.

Why it is still here (checked again for issue 33): Typer 0.29 made pydantic a requirement and
converts every parameter through a pydantic `TypeAdapter` (typer's pull request 1831), and its
newest release (0.29.2) still does, with no switch to turn it off. Measured from `app([...])` to
the API's call, `validate` with ten options, side by side (2 shared cores, load ~4-5): 7-25 ms
with the conversions here, 93-145 ms with Typer's own (importing pydantic and building the
adapters), on every run of every command.

Only public API is used, so that every Typer from the declared floor on works: what an option
is (its type, bounds, choices) is read from the command's own declaration (the annotation and
the `typer.Option(...)` in its signature), never from Typer's internal objects, and the plain
conversion goes in front of click's `Parameter.process_value`.
"""

import inspect
import re
import types
import typing
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

from typer.core import TyperCommand, TyperGroup
from typer.models import ParameterInfo

from pipeline.cli.process import fail


@dataclass(frozen=True)
class Declared:
    """A parameter as the command declares it: its type (`None` taken out of `int | None`)
    and its `typer.Option(...)` / `typer.Argument(...)`, when it has one."""

    annotation: Any
    info: ParameterInfo | None

    def setting(self, name: str) -> Any:
        return getattr(self.info, name, None)


def _declared(callback: Any) -> dict[str, Declared]:
    """The declared parameters of a command's function, by name (Typer's wrapper keeps the
    function's signature: `functools.update_wrapper`)."""
    if callback is None:
        return {}
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):
        return {}
    declared = {}
    for name, parameter in signature.parameters.items():
        annotation, info = parameter.annotation, None
        if typing.get_origin(annotation) is typing.Annotated:
            annotation, *extras = typing.get_args(annotation)
            info = next((e for e in extras if isinstance(e, ParameterInfo)), None)
        if isinstance(parameter.default, ParameterInfo):
            info = parameter.default
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = kinds[0] if len(kinds) == 1 else annotation
        declared[name] = Declared(annotation, info)
    return declared


def _metavar(param: Any, declared: Declared | None) -> str:
    """A plain metavar: the one declared, else the choices, else N, X, FILE or TEXT."""
    if param.metavar:
        return param.metavar
    kind = declared.annotation if declared else str
    if isinstance(kind, type) and issubclass(kind, Enum):
        return "|".join(str(c.value) for c in kind)
    return {int: "N", float: "X", Path: "FILE"}.get(kind, "TEXT")


def _extras(param: Any, declared: Declared | None) -> str:
    """`[default: ...; at least 1]`, after an option's help."""
    extra = []
    default = param.default if getattr(param, "show_default", None) is not False else None
    if isinstance(default, StrEnum):
        default = default.value
    if default not in (None, False, "") and not callable(default) and not param.required:
        extra.append(f"default: {default}")
    low, high = (declared.setting("min"), declared.setting("max")) if declared else (None, None)
    if low is not None and high is not None and high < 2**62:
        extra.append(f"{low} to {high}")
    elif low is not None:
        extra.append(f"at least {low}")
    return f"  [{'; '.join(extra)}]" if extra else ""


_WHOLE_NUMBER = re.compile(r"0|[1-9][0-9]{0,18}")
_UNSURE = object()  # a value `_plain_value` leaves to Typer


def _choice(annotation: type[Enum], value: Any, case_sensitive: bool) -> Any:
    """The member of `annotation` that `value` names exactly (its value), else `_UNSURE`."""
    if isinstance(value, annotation):
        return value
    if not isinstance(value, str):
        return _UNSURE
    for member in annotation:
        named = str(member.value)
        if named == value or (not case_sensitive and named.lower() == value.lower()):
            return member
    return _UNSURE


def _plain_value(declared: Declared, value: Any) -> Any:
    """`value` converted as Typer would, when that is plain (else `_UNSURE`): a string for
    `str`, a whole number within the bounds for `int`, a flag's own bool, a choice named exactly
    for an Enum, a list of strings for `list[str]`, paths for `Path` (when Typer is not asked to
    check them)."""
    annotation, setting = declared.annotation, declared.setting
    if setting("parser") is not None or setting("click_type") is not None:
        return _UNSURE
    if annotation is str and isinstance(value, str):
        return value
    if annotation is bool and isinstance(value, bool):
        return value
    if annotation is int and not setting("clamp"):
        if isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value):
            value = int(value)
        if type(value) is int:
            low, high = setting("min"), setting("max")
            if (low is None or value >= low) and (high is None or value <= high):
                return value
        return _UNSURE
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        case_sensitive = setting("case_sensitive")
        return _choice(annotation, value, case_sensitive is not False)
    if annotation == list[str] and isinstance(value, list | tuple):
        if all(isinstance(v, str) for v in value):
            return list(value)
    if any(setting(check) for check in ("exists", "resolve_path", "allow_dash", "writable")):
        return _UNSURE  # a path Typer checks
    if annotation is Path and isinstance(value, str | Path):
        return Path(value)
    if annotation == list[Path] and isinstance(value, list | tuple):
        if all(isinstance(v, str | Path) for v in value):
            return [Path(v) for v in value]
    return _UNSURE


def _plain_conversions(params: list[Any], declared: dict[str, Declared]) -> None:
    """Put the conversion of plain values in front of each parameter's own (click's public
    `process_value`), where Typer would convert them with pydantic (Typer 0.29 on: its
    parameters have no click `type`); what is not plain goes to Typer as before."""
    for param in params:
        if getattr(param, "type", None) is not None or "process_value" in vars(param):
            continue  # click's types convert it (Typer before 0.29), or it is done already
        own = declared.get(param.name)
        if own is None and getattr(param, "is_flag", False):
            own = Declared(bool, None)  # Typer's own flags (--install-completion)
        if own is not None:
            param.process_value = _plain_first(param, own)


def _plain_first(param: Any, declared: Declared) -> Any:
    typer_own = param.process_value
    many = param.multiple or param.nargs == -1

    def process_value(ctx: Any, value: Any) -> Any:
        if value is None:  # not given, no default: as Typer has it
            plain = () if many else None
        else:
            plain = _plain_value(declared, value)
        if plain is _UNSURE or (param.required and param.value_is_missing(plain)):
            return typer_own(ctx, value)  # its conversion, or its error
        if param.callback is not None:
            plain = param.callback(ctx, param, plain)
        return plain

    return process_value


def _usage_error_in_one_line(e: Exception, command: str) -> None:
    """click's usage error (Typer keeps its click private: matched by what it has) as the
    command's one line, `error: ... (see COMMAND --help)`, exit code 2; anything else raised
    on."""
    if getattr(e, "exit_code", None) != 2 or not hasattr(e, "format_message"):
        raise e
    fail(f"{e.format_message()} (see {command} --help)")


class _Plain:
    """What the program and its commands share: plain values converted first (`parse_args`
    of each calls `_convert_plainly`) and usage errors in one line, `error: ...` with exit
    code 2, named after the command (`sudoku-pipeline solve`)."""

    callback: Any

    def _convert_plainly(self, ctx: Any) -> None:
        _plain_conversions(self.get_params(ctx), _declared(self.callback))  # type: ignore[attr-defined]

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)  # type: ignore[misc]
        except Exception as e:
            names = (getattr(parent, "info_name", None), info_name)
            _usage_error_in_one_line(e, " ".join(n for n in names if n) or "sudoku-pipeline")
            raise


class Group(_Plain, TyperGroup):
    """The program's group of commands, its own options converted as `Command`'s are, and its
    usage errors (no command, an unknown one, an unknown option) in one line, as theirs."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and not ctx.resilient_parsing:  # click 8.1 shows the help, exit 0; 8.2 on 2
            names = ", ".join(self.list_commands(ctx))
            fail(f"Missing command, one of: {names} (see {ctx.command_path} --help)")
        self._convert_plainly(ctx)
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except Exception as e:  # 'No such command ...', with click's 'Did you mean ...?'
            _usage_error_in_one_line(e, ctx.command_path)
            raise


class Command(_Plain, TyperCommand):
    """A command with plain help and one-line usage errors, `error: ...` with exit code 2."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        self._convert_plainly(ctx)
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = ["[OPTIONS]"]
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = (param.metavar or param.name.upper()) + ("..." if param.nargs != 1 else "")
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = [], []
        declared = _declared(self.callback)
        for param in self.get_params(ctx):
            if getattr(param, "hidden", False):
                continue
            text = (getattr(param, "help", None) or "") + _extras(param, declared.get(param.name))
            if param.param_type_name == "argument":
                arguments.append((param.metavar or param.name.upper(), text))
                continue
            names = ", ".join(sorted(param.opts, key=lambda o: (o.startswith("--"), o)))
            if param.secondary_opts:
                names += " / " + ", ".join(param.secondary_opts)
            elif not param.is_flag:
                names += f" {_metavar(param, declared.get(param.name))}"
            options.append((names, text))
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        with formatter.section("Options"):
            formatter.write_dl(options)
