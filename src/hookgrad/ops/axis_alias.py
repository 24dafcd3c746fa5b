"""NumPy's ``axis=`` keyword as an alias of ``dim=``: torch's argument parser accepts it for every
op with a ``dim`` argument (``x.sum(axis=1)``, ``torch.cat(ts, axis=0)``). The op functions keep
their plain signatures; ``install`` wraps the public ones, which costs a dict lookup per call."""
from __future__ import annotations

import functools


# the public functions / methods whose first dim-like argument is called ``dim``
NAMES = ("sum", "mean", "std", "var", "prod", "amax", "amin", "max", "min", "argmax", "argmin",
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


def install(namespace: dict) -> None:
    """Wrap the listed functions of a module namespace (``hookgrad``'s); the Tensor methods of
    those names are wrapped where the method table binds them."""
    for name in NAMES:
        if name in namespace:
            namespace[name] = accept_axis(namespace[name])
