"""torch's ``out=`` for the functions that compute a fresh result and copy it: one wrapper, so
no function that declares ``out`` can accept it and then leave it untouched."""
from __future__ import annotations

import dis
import functools
import inspect
from typing import Callable

from ..tensor import Tensor
from .pointwise import _into


def reads_out(fn: Callable) -> bool:
    """True when ``fn``'s own code reads its ``out`` argument (it writes the result itself)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    for instruction in dis.get_instructions(code):
        if instruction.opname.startswith("LOAD_FAST"):
            names = instruction.argval
            if names == "out" or (isinstance(names, tuple) and "out" in names):
                return True
    return False


def accept_out(fn: Callable) -> Callable:
    """``fn`` with ``out=`` honoured by a copy: the result (or each of a tuple of results) is
    written into the given tensor(s), resized when the shape differs, as torch does. A factory
    that takes ``dtype`` makes its result in out's dtype when none is given, as torch's do."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if "out" not in parameters or reads_out(inspect.unwrap(fn)):
        return fn
    takes_dtype = "dtype" in parameters
    name = fn.__name__

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if isinstance(out, Tensor):
            if takes_dtype and kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            return _into(out, fn(*args, **kwargs), name)
        result = fn(*args, **kwargs)
        if not isinstance(result, tuple) or len(result) != len(out):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} "
                            f"Tensors" if isinstance(result, tuple) else
                            f"{name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        written = [_into(target, value, name) for target, value in zip(out, result)]
        return tuple(written) if type(result) is tuple else type(result)(*written)

    return with_out
