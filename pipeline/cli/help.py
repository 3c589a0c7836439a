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
import sys
import types
import typing
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

import click
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
    """`[required; default: ...; at least 1]`, after an option's help."""
    extra = ["required"] if param.required and param.param_type_name == "option" else []
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
_ANY_WHOLE_NUMBER = re.compile(r"\s*[-+]?[0-9]+\s*")
INT64 = (-(2**63), 2**63 - 1)  # the bounds of a whole-number option that declares none
_UNSURE = object()  # a value `_plain_value` leaves to Typer


def bounds(declared: Declared) -> tuple[int, int]:
    """The whole numbers `declared` (an `int` parameter) takes: its own `min` and `max`, each
    int64's where it declares none (a number past int64 fits no array, no kernel, no file)."""
    low, high = declared.setting("min"), declared.setting("max")
    return (INT64[0] if low is None else low, INT64[1] if high is None else high)


def _out_of_bounds(declared: Declared, value: Any, undeclared_only: bool = False) -> str | None:
    """Why a whole number given to an `int` parameter is out of its bounds (in Typer's words),
    or None. Typer checks the bounds a parameter declares, but takes any size of number where
    it declares none: a number past int64 then failed deep in the job, with a traceback."""
    if declared.annotation is not int or declared.setting("clamp"):
        return None
    if isinstance(value, str) and _ANY_WHOLE_NUMBER.fullmatch(value):
        number = int(value)
    elif type(value) is int:
        number = value
    else:
        return None
    low, high = bounds(declared)
    if undeclared_only:  # click checks the declared bounds itself, in its words
        low = INT64[0] if declared.setting("min") is None else None
        high = INT64[1] if declared.setting("max") is None else None
    if high is not None and number > high:
        return f"Input should be less than or equal to {high}"
    if low is not None and number < low:
        return f"Input should be greater than or equal to {low}"
    return None


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
        if "process_value" in vars(param):
            continue  # done already
        if getattr(param, "type", None) is not None:  # click's types convert it (Typer < 0.29)
            if (own := declared.get(param.name)) is not None:  # int64's bounds all the same
                param.process_value = _bounded_first(param, own)
            continue
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
        elif (why := _out_of_bounds(declared, value)) is not None:
            _refuse(param, ctx, why)
        else:
            plain = _plain_value(declared, value)
        if plain is _UNSURE or (param.required and param.value_is_missing(plain)):
            return typer_own(ctx, value)  # its conversion, or its error
        if param.callback is not None:
            plain = param.callback(ctx, param, plain)
        return plain

    return process_value


def _bounded_first(param: Any, declared: Declared) -> Any:
    """Click's own conversion (Typers before 0.29), after the bounds check of `_plain_first`:
    click's INT takes any size of number where no bound is declared."""
    click_own = param.process_value

    def process_value(ctx: Any, value: Any) -> Any:
        why = None if value is None else _out_of_bounds(declared, value, undeclared_only=True)
        if why is not None:
            _refuse(param, ctx, why)
        return click_own(ctx, value)

    return process_value


def _refuse(param: Any, ctx: Any, why: str) -> None:
    """A usage error naming the parameter, as click says its own."""
    names = (
        param.opts if param.param_type_name == "option" else [param.metavar or param.name.upper()]
    )
    hint = " / ".join(f"'{name}'" for name in names)
    raise click.BadParameter(why, ctx=ctx, param_hint=hint)


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


def _refuse_repeats(command: Any, ctx: Any, args: list[str]) -> None:
    """An option that takes one value (or a flag) given twice is refused in one line, as
    ruff's and uv's are: click would keep the last silently (`bench --strategy fast --strategy
    mrv` ran mrv alone). Options that are lists (`multiple`) take each one given."""
    _, _, order = command.make_parser(ctx).parse_args(args=list(args))  # no side effects
    seen: set[str] = set()
    for param in order:
        if param.param_type_name != "option" or param.multiple or param.count:
            continue
        if param.name in seen:
            name = max(param.opts, key=len)
            fail(f"{name} given twice: give it once (see {ctx.command_path} --help)")
        seen.add(param.name)


@contextmanager
def _warnings_said_by(command: str, quiet: bool) -> Iterator[None]:
    """The library's warnings said in the command's voice, never as Python's warning line
    (`sudoku-pipeline:0: CompilingWarning: ...`): a kernel compiling where no job expected it
    (a pencilmark row, a worker's first call) as `solve: compiling ...` (`-q`: not at all), an
    input's `InputWarning` as `solve: warning: ...` (`-q` too: it tells of the data). Each is
    told by its class's name: the command line does not import numba to say it."""
    shown = warnings.showwarning

    def show(message: Any, category: type, *where: Any, **more: Any) -> None:
        if category.__name__ == "InputWarning":
            print(f"{command}: warning: {message}", file=sys.stderr, flush=True)
        elif category.__name__ != "CompilingWarning":
            shown(message, category, *where, **more)
        elif not quiet:
            print(f"{command}: {message}", file=sys.stderr, flush=True)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


class Command(_Plain, TyperCommand):
    """A command with plain help and one-line usage errors, `error: ...` with exit code 2; an
    option given twice is one of them, unless it is a list (`_refuse_repeats`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        self._convert_plainly(ctx)
        if not ctx.resilient_parsing:
            _refuse_repeats(self, ctx, args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        with _warnings_said_by(ctx.info_name or "sudoku-pipeline", bool(ctx.params.get("quiet"))):
            return super().invoke(ctx)

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
