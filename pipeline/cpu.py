"""What the CPU at hand offers the kernels, read once from /proc/cpuinfo (no numba here: cheap
to import from the command line and the run metadata).

numba compiles the kernels for this CPU (its cache is kept per CPU), so an instruction the
kernels use where the CPU has it fast is chosen once, when they are compiled or loaded:

    fast_pext()         # bits.row_box_triads by `pext` (BMI2), else three table loads
    instructions()      # "AVX2, pext": what the benchmark tables and bench's footer name

`SUDOKU_PIPELINE_PEXT=0` (or `1`) overrides the choice; it is part of the digest the cached
kernels are checked against (`compiled.kernel_sources_stamp`), so a change compiles them again.
"""

import os
import platform
from functools import cache
from pathlib import Path

PEXT_ENV = "SUDOKU_PIPELINE_PEXT"


@cache
def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo (empty elsewhere)."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break
            name, _, value = line.partition(":")
            fields[name.strip()] = value.strip()
    except OSError:
        pass
    return fields


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what `platform` knows."""
    return _cpuinfo().get("model name") or platform.processor() or platform.machine()


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (`avx2`, `bmi2`, ...; `Features` on ARM)."""
    info = _cpuinfo()
    return frozenset((info.get("flags") or info.get("Features") or "").split())


def vector_extension() -> str:
    """The widest vector instructions the CPU offers: `AVX-512`, `AVX2`, `SSE4.2`, `NEON` or
    `none`. The vector operations of `pipeline.kernels.bits` become these (or narrower ones),
    and the speed ratios against other solvers move with them: the same "AMD EPYC" name
    covers VMs with and without AVX-512."""
    flags = cpu_flags()
    if {"avx512f", "avx512bw"} <= flags:
        return "AVX-512"
    if "avx2" in flags:
        return "AVX2"
    if "sse4_2" in flags:
        return "SSE4.2"
    if "asimd" in flags or platform.machine().lower() in ("arm64", "aarch64"):
        return "NEON"
    return "none"


def fast_pext() -> bool:
    """Whether the kernels gather a band's triads with `pext`: the CPU has BMI2 and runs it in
    hardware (Intel since Haswell, AMD since Zen 3; Zen 1 and 2 run it in microcode, tens to
    hundreds of cycles), numba compiles for this CPU (not for a portable `NUMBA_CPU_NAME`),
    unless `SUDOKU_PIPELINE_PEXT` says otherwise (never without BMI2)."""
    if "bmi2" not in cpu_flags():
        return False  # whatever the override says: the instruction would not run
    forced = os.environ.get(PEXT_ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    if os.environ.get("NUMBA_CPU_NAME", "host") != "host":
        return False
    info = _cpuinfo()
    if info.get("vendor_id") in ("AuthenticAMD", "HygonGenuine"):
        try:
            return int(info.get("cpu family", "0")) >= 25
        except ValueError:
            return False
    return True


def instructions() -> str:
    """The instructions the kernels use on this CPU, as the machine lines name them:
    `vector_extension()`, and `pext` when `fast_pext()`."""
    return vector_extension() + (", pext" if fast_pext() else "")
