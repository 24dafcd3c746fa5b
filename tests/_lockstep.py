"""Run one tutorial script under hookgrad and under torch so that both see the same random numbers,
and compare what they print.

hookgrad now draws torch's own stream (tests/ops/test_random.py checks that bit for bit); the
harness still pins both runs to one shared stream, so a tutorial comparison isolates the ops from
the draws. While a script runs every random entry point it can reach
(``randn``, ``rand``, ``randint``, ``randperm``, the ``*_like`` factories, ``manual_seed``,
``Tensor.uniform_/normal_``, ``nn.init.uniform_/normal_`` and so every initialiser built on them,
``nn.functional.dropout``) is replaced, in both libraries alike, by one implementation drawing from
a NumPy generator seeded identically. The scripts stay plain tutorial code: all of this lives here.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import math
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np

SEED = 0
_INHERITED = object()  # torch.Tensor.uniform_ lives on its C base class, not in its __dict__


class SharedRandom:
    """The one stream both runs draw from; ``manual_seed`` restarts it. While ``paused`` (inside
    a library's internal draws: gradcheck's probes, a sampler's seed) the libraries' own
    generators serve instead, so that those never shift the script's stream."""

    def __init__(self, seed: int = SEED):
        self.rng = np.random.default_rng(seed)
        self.paused = 0

    def manual_seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(int(seed))


def _shape(size: tuple) -> tuple:
    """``randn(2, 3)``, ``randn((2, 3))``, ``randn(torch.Size([2, 3]))`` and ``randn(())``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(n) for n in size)


def _numpy_dtype(lib: ModuleType, dtype) -> np.dtype:
    return lib.empty(0, dtype=dtype if dtype is not None else lib.get_default_dtype()).numpy().dtype


def _make(lib: ModuleType, values, dtype: np.dtype, requires_grad: bool):
    result = lib.from_numpy(np.array(values, dtype=dtype))  # a fresh C-ordered array, 0-d kept
    return result.requires_grad_(True) if requires_grad else result


def _fill(lib: ModuleType, tensor, values):
    with lib.no_grad():
        tensor.copy_(lib.from_numpy(np.array(values, dtype=tensor.detach().numpy().dtype)))
    return tensor


def _random_functions(lib: ModuleType, shared: SharedRandom) -> dict:
    """The replacements, written once against the API both libraries share."""

    def manual_seed(seed):
        shared.manual_seed(seed)
        return original_manual_seed(seed)

    def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, **_):
        draws = shared.rng.standard_normal(_shape(size))
        return _make(lib, draws, _numpy_dtype(lib, dtype), requires_grad)

    def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, **_):
        draws = shared.rng.random(_shape(size))
        return _make(lib, draws, _numpy_dtype(lib, dtype), requires_grad)

    def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
                requires_grad=False, **_):
        if size is None:
            *args, size = args
        if high is None:
            *args, high = args
        low = low if low is not None else (args[0] if args else 0)
        draws = shared.rng.integers(low, high, _shape((size,)))
        return _make(lib, draws, _numpy_dtype(lib, dtype or lib.int64), requires_grad)

    def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, **_):
        draws = shared.rng.permutation(int(n))
        return _make(lib, draws, _numpy_dtype(lib, dtype or lib.int64), requires_grad)

    def randn_like(input, *, dtype=None, requires_grad=False, **_):
        return randn(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)

    def rand_like(input, *, dtype=None, requires_grad=False, **_):
        return rand(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)

    def uniform_(tensor, a=0.0, b=1.0, *, generator=None):
        return _fill(lib, tensor, a + (b - a) * shared.rng.random(tuple(tensor.shape)))

    def normal_(tensor, mean=0.0, std=1.0, *, generator=None):
        return _fill(lib, tensor, mean + std * shared.rng.standard_normal(tuple(tensor.shape)))

    def init_uniform_(tensor, a=0.0, b=1.0, generator=None):
        return uniform_(tensor, a, b)

    def init_normal_(tensor, mean=0.0, std=1.0, generator=None):
        return normal_(tensor, mean, std)

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0.0:
            return input
        keep = shared.rng.random(tuple(input.shape)) >= p
        scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
        noise = _make(lib, keep * scale, input.detach().numpy().dtype, False)
        return input.mul_(noise) if inplace else input * noise

    original_manual_seed = lib.manual_seed
    return {"manual_seed": manual_seed, "randn": randn, "rand": rand, "randint": randint,
            "randperm": randperm, "randn_like": randn_like, "rand_like": rand_like,
            "uniform_": uniform_, "normal_": normal_, "init_uniform_": init_uniform_,
            "init_normal_": init_normal_, "dropout": dropout}


def _targets(lib: ModuleType) -> list:
    """(owner, attribute, replacement key) for every entry point of ``lib`` to replace."""
    factories = ["manual_seed", "randn", "rand", "randint", "randperm", "randn_like", "rand_like"]
    owners = [lib]
    if lib.__name__ == "hookgrad":
        # hookgrad's own modules look these up on its random module (samplers, init).
        from hookgrad.ops import random

        owners.append(random)
    targets = [(owner, name, name) for owner in owners for name in factories]
    targets += [(lib.Tensor, "uniform_", "uniform_"), (lib.Tensor, "normal_", "normal_"),
                (lib.nn.init, "uniform_", "init_uniform_"),
                (lib.nn.init, "normal_", "init_normal_"),
                (lib.nn.functional, "dropout", "dropout")]
    return targets


def _internal_draws(lib: ModuleType) -> list:
    """(owner, attribute) of functions whose random draws are the library's own business: torch
    seeds a shuffling sampler with ``Tensor.random_`` (not replaced), hookgrad with ``randint``,
    and each gradcheck draws its probes its own way."""
    internal = [(lib.autograd, "gradcheck"), (lib.autograd, "gradgradcheck")]
    if lib.__name__ == "hookgrad":
        from hookgrad.utils import data

        internal.append((data, "_fresh_generator"))
    return internal


def _unless_paused(shared: SharedRandom, replacement, original):
    def entry(*args, **kwargs):
        return (original if shared.paused else replacement)(*args, **kwargs)
    return entry


def _pausing(shared: SharedRandom, function):
    def entry(*args, **kwargs):
        shared.paused += 1
        try:
            return function(*args, **kwargs)
        finally:
            shared.paused -= 1
    return entry


@contextlib.contextmanager
def lockstep(lib: ModuleType, seed: int = SEED) -> Iterator[SharedRandom]:
    """Replace ``lib``'s random entry points with draws from one seeded NumPy stream; restore
    them (and the default dtype) on exit."""
    shared = SharedRandom(seed)
    replacements = _random_functions(lib, shared)
    patches = [(owner, name, _unless_paused(shared, replacements[key], getattr(owner, name)))
               for owner, name, key in _targets(lib)
               if hasattr(owner, name)]  # never lend a library an entry point it lacks
    patches += [(owner, name, _pausing(shared, getattr(owner, name)))
                for owner, name in _internal_draws(lib) if hasattr(owner, name)]
    saved = [(owner, name, owner.__dict__.get(name, _INHERITED)) for owner, name, _ in patches]
    for owner, name, entry in patches:
        setattr(owner, name, entry)
    default_dtype = lib.get_default_dtype()
    try:
        yield shared
    finally:
        for owner, name, original in reversed(saved):
            if original is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        lib.set_default_dtype(default_dtype)


_IMPORT = re.compile(r"^(\s*(?:import|from)\s+)hookgrad\b", re.MULTILINE)


def as_torch(source: str) -> str:
    """The same script importing torch: only the import lines change."""
    return _IMPORT.sub(r"\1torch", source)


def run_script(path: Path, library: str, in_lockstep: bool = True) -> str:
    """Run ``path`` (written against hookgrad) under ``library`` in this process, in lockstep
    unless told otherwise; return what it printed."""
    lib = importlib.import_module(library)
    source = path.read_text()
    if library == "torch":
        source = as_torch(source)
    code = compile(source, str(path), "exec")
    out = io.StringIO()
    with (lockstep(lib) if in_lockstep else contextlib.nullcontext()), \
            contextlib.redirect_stdout(out):
        exec(code, {"__name__": "__main__", "__file__": str(path)})  # noqa: S102
    return out.getvalue()


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
