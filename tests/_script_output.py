"""Run a program written against hookgrad under hookgrad and under torch, and compare what the
two runs print.

The program runs in this process (torch is imported once for the whole session) with only its
import lines rewritten for torch. Printed text must agree exactly (grad_fn names, shapes, reprs);
printed numbers within float noise, since the two libraries may sum in different orders.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import math
import re
from pathlib import Path

_IMPORT = re.compile(r"^(\s*(?:import|from)\s+)hookgrad\b", re.MULTILINE)


def as_torch(source: str) -> str:
    """The same script importing torch: only the import lines change."""
    return _IMPORT.sub(r"\1torch", source)


def run_source(source: str, library: str, filename: str = "<program>") -> str:
    """Run ``source`` (written against hookgrad) under ``library`` in this process and return
    what it printed. The default dtype is restored afterwards, whatever the program set."""
    lib = importlib.import_module(library)
    if library == "torch":
        source = as_torch(source)
    code = compile(source, filename, "exec")
    out = io.StringIO()
    default_dtype = lib.get_default_dtype()
    try:
        with contextlib.redirect_stdout(out):
            exec(code, {"__name__": "__main__", "__file__": filename})  # noqa: S102
    finally:
        lib.set_default_dtype(default_dtype)
    return out.getvalue()


def run_script(path: Path, library: str) -> str:
    """``run_source`` for a file."""
    return run_source(path.read_text(), library, str(path))


# -- comparing what was printed -------------------------------------------------------------------
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
# A number that is not the tail of a name (AddBackward0, fc1) nor a memory address.
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
                     r"|(?<![A-Za-z_])(?:nan|-?inf)(?![A-Za-z_])")
RTOL = 1e-4
ATOL = 1e-7  # float32 noise around zero: coefficients whose exact value is 0 print as +-1e-9


def _split(line: str) -> tuple:
    """(text with numbers replaced by a marker, the numbers as printed)."""
    line = _ADDRESS.sub(" at 0x?", line)
    return _NUMBER.sub("\x00", line), _NUMBER.findall(line)


def _last_place(token: str) -> float:
    """One unit in the last printed place of a float token (0 for integers: compared exactly)."""
    mantissa, _, exponent = token.lower().partition("e")
    if "." not in mantissa and not exponent:
        return 0.0
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def numbers_match(actual: str, expected: str, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Integers exactly; floats within ``rtol`` and ``atol`` plus one unit of the last printed
    digit (a value that rounds the other way at the printed precision)."""
    if actual == expected:
        return True
    a, e = float(actual), float(expected)
    if math.isnan(a) or math.isnan(e) or math.isinf(a) or math.isinf(e):
        return False
    if _last_place(expected) == 0.0 or _last_place(actual) == 0.0:
        return False  # unequal integers, or an integer printed where the other has a float
    slack = max(_last_place(actual), _last_place(expected))
    return abs(a - e) <= atol + rtol * max(abs(a), abs(e)) + slack * (1 + 1e-9)


def first_difference(actual: str, expected: str) -> str | None:
    """None when the outputs agree (text exactly, numbers as ``numbers_match``), else a message
    naming the first line that differs."""
    actual_lines, expected_lines = actual.splitlines(), expected.splitlines()
    for number, (a, e) in enumerate(zip(actual_lines, expected_lines), 1):
        a_text, a_numbers = _split(a)
        e_text, e_numbers = _split(e)
        same = a_text == e_text and all(numbers_match(x, y) for x, y in zip(a_numbers, e_numbers))
        if not same:
            return f"line {number} differs:\n  hookgrad: {a!r}\n  torch:    {e!r}"
    if len(actual_lines) != len(expected_lines):
        shorter = min(len(actual_lines), len(expected_lines))
        extra = max(actual_lines, expected_lines, key=len)[shorter]
        return (f"hookgrad printed {len(actual_lines)} lines, torch {len(expected_lines)}; first "
                f"extra: {extra!r}")
    return None
