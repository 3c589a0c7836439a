"""What every command of `sudoku-pipeline` shares: its help, its errors, its common options.

* Help reads like a Unix tool's: `Usage: sudoku-pipeline solve [OPTIONS] INPUT...`, each option
  with a plain metavar (`N`, `FILE`, `NAME`, the choices `fast|mrv|backtrack`), no Python types.
* Every error is one line on stderr, `error: ...`, with the exit code it calls for: usage errors
  and bad files 2, lost workers 2, Ctrl-C 130; a closed pipe (`... | head`) ends quietly.
* The options of every file job (reading, workers, executor, output) are declared once here.
* Plain values (text, whole numbers in range, one of the choices) are converted here, without
  importing pydantic (what Typer converts with: 0.1-0.2 s, a third of solving the 3,000-row
  sample); anything else, a bad value included, goes to Typer's own conversion, which says
  what is wrong in its words.
"""

import atexit
import errno
import inspect
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from pipeline.errors import PipelineError, printable
from pipeline.run.executors import EXECUTORS, WORKER_THREAD

AS_PROGRAM = False  # set by `main()`: the process is the command (not a test's CliRunner)
EXIT_BROKEN_PIPE = 141  # what a shell reports for a program that met a closed pipe (SIGPIPE)
EXIT_INTERRUPTED = 130
_reported = False  # `fail` printed the command's one line


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def take_signals() -> None:
    """From here on Ctrl-C and SIGTERM are a KeyboardInterrupt wherever they come (the jobs
    keep what they finished, and say so in one line), unless the program was started
    ignoring them."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _terminated)


def interrupted_silently(code: object) -> bool:
    """Whether the program is ending with 130 and no line said why: typer turns a
    KeyboardInterrupt outside a command's `one_line_errors` (while the options are parsed,
    say) into a silent exit 130."""
    return code == EXIT_INTERRUPTED and not _reported


def fail(message: str, code: int = 2) -> NoReturn:
    """End the command: `error: message` on stderr, exit `code`. The message stays one line
    whatever names it holds: control characters are escaped (`printable`).

    A job stopped mid-batch (Ctrl-C, a lost cluster) may leave a worker thread inside a kernel
    or inside pyarrow: the process then ends at once instead of letting the interpreter shut
    down under it (CPython ends such daemon threads in a way C++ code can turn into an abort).
    """
    global _reported
    typer.echo(f"error: {printable(message)}", err=True)
    _reported = True
    busy = any(t.name.startswith(WORKER_THREAD) and t.is_alive() for t in threading.enumerate())
    if busy and AS_PROGRAM:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise typer.Exit(code)


def _quiet_broken_pipe() -> NoReturn:
    """The reader of stdout went away (`| head`): stop without a word, as Unix tools do."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # nothing left to flush into the closed pipe
    raise typer.Exit(EXIT_BROKEN_PIPE)


def leave(status: object) -> NoReturn:
    """End the program with `status` (a `SystemExit` code), skipping Python's module teardown.

    Once a job has run, numba, pyarrow and pydantic are loaded, and tearing their modules down
    takes ~0.13 s, more than solving the 3,000-row sample (its warm run: 0.66 s -> 0.54 s). The
    exit handlers still run (tqdm's monitor, multiprocessing, Dask) and the standard streams are
    flushed; while a non-daemon thread still runs, the normal shutdown waits for it as usual.
    """
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if not isinstance(status, int | None) or any(not t.daemon for t in others):
        raise SystemExit(status)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):  # the reader went away; nothing more to tell it
        status = status or EXIT_BROKEN_PIPE
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(status or 0)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Every error a command meets, as one line on stderr and the exit code it calls for."""
    try:
        yield
    except PipelineError as e:
        fail(str(e), e.EXIT_CODE)
    except KeyboardInterrupt:  # at a moment the job could not tell what it kept
        fail("interrupted", 130)
    except BrokenPipeError:
        _quiet_broken_pipe()
    except OSError as e:
        if e.errno == errno.EPIPE:
            _quiet_broken_pipe()
        fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))


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


def _option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=annotation)  # fmt: skip


Executor = StrEnum("Executor", {name: name for name in EXECUTORS})  # type: ignore[misc]
InputFormat = StrEnum("InputFormat", {n: n for n in ("csv", "tsv", "txt", "parquet")})  # type: ignore[misc]
OutputFormat = StrEnum("OutputFormat", {n: n for n in ("parquet", "csv", "jsonl")})  # type: ignore[misc]

Column = Annotated[str | None, typer.Option("--column", metavar="NAME",
                   help="Puzzle column (default: found by name or content).")]  # fmt: skip
SolutionColumn = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="Column of expected solutions (default: found by name)."),
]
IdColumn = Annotated[str | None, typer.Option(metavar="NAME",
                     help="Id column passed through (default: `id`).")]  # fmt: skip
Separator = Annotated[str | None, typer.Option(metavar="CHAR",
                      help="CSV field separator (default: , or tab).")]  # fmt: skip
Header = Annotated[bool | None, typer.Option("--header/--no-header",
                   help="Force a CSV header on or off.")]  # fmt: skip
InputFormatOption = Annotated[
    InputFormat | None,
    typer.Option(
        "--input-format", help="The input's format (default: from its name; stdin is sniffed)."
    ),
]
FormatOption = Annotated[
    OutputFormat | None,
    typer.Option("--format", help="The output's format (default: from its suffix; CSV on stdout)."),
]
Force = Annotated[bool, typer.Option("--force", help="Replace an output file that is not a "
                                     "result of this tool.")]  # fmt: skip
Workers = Annotated[int | None, typer.Option(min=1, metavar="N",
                    help="Workers (default: the CPUs this process may use).")]  # fmt: skip
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")]
ExecutorOption = Annotated[Executor, typer.Option(
    "--executor", help="local: threads here; processes: worker processes here; dask: a Dask "
    "cluster (see README).")]  # fmt: skip
Scheduler = Annotated[
    str | None,
    typer.Option(
        metavar="ADDRESS", help="Dask scheduler, tcp://HOST:PORT (default: a LocalCluster)."
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")]
LOCAL = Executor("local")

# The options of every file job (solve, validate), declared once: `file_job` adds them to a
# command's signature, which is what Typer reads, and the command receives them in `**job`.
JOB_OPTIONS = [
    _option("column", Column, None),
    _option("solution_column", SolutionColumn, None),
    _option("id_column", IdColumn, None),
    _option("separator", Separator, None),
    _option("has_header", Header, None),
    _option("input_format", InputFormatOption, None),
    _option("format", FormatOption, None),
    _option("force", Force, False),
    _option("workers", Workers, None),
    _option("quiet", Quiet, False),
    _option("as_json", AsJson, False),
    _option("executor", ExecutorOption, LOCAL),
    _option("scheduler", Scheduler, None),
]


def file_job(command: Callable[..., None]) -> Callable[..., None]:
    """Give a command the options of `JOB_OPTIONS` (after its own)."""
    signature = inspect.signature(command)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    command.__signature__ = signature.replace(parameters=own + JOB_OPTIONS)  # type: ignore[attr-defined]
    return command


def job_options(job: dict[str, Any]) -> dict[str, Any]:
    """The API's `JobOptions` from the command's `JOB_OPTIONS` (`--json` is the command's)."""
    options = {k: v for k, v in job.items() if k not in ("quiet", "as_json")}
    options = {k: v.value if isinstance(v, StrEnum) else v for k, v in options.items()}
    return options | {"progress": not job["quiet"]}


def print_summary(summary: Any, job: dict[str, Any], stdout_taken: bool = False) -> None:
    """`--json`: the summary as JSON on stdout (on stderr when stdout holds the output);
    else the summary sentence on stderr, unless `-q`."""
    if job["as_json"]:
        typer.echo(summary.to_json(), err=stdout_taken)
    elif not job["quiet"]:
        typer.echo(summary.describe(), err=True)
