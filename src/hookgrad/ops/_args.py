"""Argument handling shared by the view, shape and index ops: size lists given as ``f(2, 3)`` or
``f((2, 3))``, a ``-1`` size inferred from the element count (``out=`` is in ``_out``).

Also NumPy's ``axis=`` keyword as an alias of ``dim=``: torch's argument parser accepts it for every
op with a ``dim`` argument (``x.sum(axis=1)``, ``torch.cat(ts, axis=0)``). The op functions keep
their plain signatures; ``install_axis_alias`` wraps the public ones, which costs a dict lookup
per call."""
from __future__ import annotations

import functools
import math
import operator


def _shape_args(shape, op: str = "view") -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))`` as a tuple of ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        return tuple(map(operator.index, shape))  # every view and reshape: no Python loop
    except TypeError:
        pass
    result = []  # some size is no int: found again, one by one, to name it in the error
    for position, size in enumerate(shape):
        try:
            result.append(operator.index(size))
        except TypeError:
            raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, but "
                            f"found element of type {type(size).__name__} at pos {position}"
                            ) from None
    return tuple(result)


def infer_shape(shape, numel: int) -> tuple:
    """``shape`` with its one ``-1`` filled in; torch's messages when that is impossible."""
    shape = tuple(map(int, shape))
    if shape and min(shape) < 0:
        if shape.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        for index, size in enumerate(shape):
            if size < -1:
                raise RuntimeError(f"invalid shape dimension {size} at index {index} of shape "
                                   f"{list(shape)}")
        known = math.prod(s for s in shape if s != -1)  # Python ints: exact, and fast
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                                   "because the unspecified dimension size -1 can be any value "
                                   "and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


# the public functions / methods whose first dim-like argument is called ``dim``
AXIS_NAMES = ("sum", "mean", "std", "var", "prod", "amax", "amin", "max", "min", "argmax", "argmin",
         "logsumexp", "any", "all", "cumsum", "softmax", "log_softmax", "squeeze", "unsqueeze",
         "cat", "concat", "stack", "sort", "argsort", "topk", "kthvalue", "median", "nanmedian",
         "mode", "cumprod", "cummax", "cummin", "logcumsumexp", "nansum", "nanmean",
         "count_nonzero", "aminmax", "var_mean", "std_mean", "diff", "unique")


def accept_axis(fn):
    """``fn`` also taking ``axis=`` for ``dim=``."""
    if getattr(fn, "_accepts_axis", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "axis" in kwargs:
            if "dim" in kwargs:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'dim' (axis is "
                                "an alias of dim)")
            kwargs["dim"] = kwargs.pop("axis")
        return fn(*args, **kwargs)

    wrapper._accepts_axis = True
    return wrapper


def install_axis_alias(namespace: dict) -> None:
    """Wrap the listed functions of a module namespace (``hookgrad``'s); the Tensor methods of
    those names are wrapped where the method table binds them."""
    for name in AXIS_NAMES:
        if name in namespace:
            namespace[name] = accept_axis(namespace[name])
