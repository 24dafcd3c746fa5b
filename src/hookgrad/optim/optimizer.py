"""Optimizer: parameter groups, per-parameter state, step hooks and torch's state_dict format.

Subclasses implement ``step`` with vectorised NumPy on each parameter's array, in place, and bump
the version counters as torch's in-place ops would (so a saved tensor that a step changed is
caught by autograd's version check).
"""
from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable, Iterable, Optional, Union

import numpy as np

from .._warnings import warn
from .. import _dtype
from ..autograd import grad_mode
from ..autograd.graph import legacy_type_name
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle, add_hook

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]

ParamsT = Union[Iterable[Tensor], Iterable[dict], Iterable[tuple]]
StepPreHook = Callable[["Optimizer", tuple, dict], Optional[tuple]]
StepPostHook = Callable[["Optimizer", tuple, dict], None]

_global_step_pre_hooks: "OrderedDict[int, StepPreHook]" = OrderedDict()
_global_step_post_hooks: "OrderedDict[int, StepPostHook]" = OrderedDict()


class _RequiredParameter:
    """A default that every parameter group must set (torch's ``optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook: StepPreHook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` runs before every optimizer's
    ``step``; ``args`` starts with the optimizer, and a returned pair replaces the arguments:
    ``h = register_optimizer_step_pre_hook(lambda opt, a, k: print(type(opt)))``."""
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: StepPostHook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs) -> None`` runs after every optimizer's ``step``."""
    return add_hook(_global_step_post_hooks, hook)


def _value(x: Any) -> Any:
    """A hyperparameter as a Python number (a 1-element tensor lr is allowed, as in torch)."""
    return x.item() if isinstance(x, Tensor) else x


def _bump(*tensors: Tensor) -> None:
    """Record an in-place change, as each of torch's in-place ops does."""
    for tensor in tensors:
        tensor._version_counter[0] += 1


def _scalar_dtype() -> np.dtype:
    """The dtype of ``state['step']``: float64 only when that is the default dtype (torch's)."""
    default = _dtype.get_default_dtype().numpy
    return np.dtype(np.float64) if default == np.float64 else np.dtype(np.float32)


def _zeros_like(param: Tensor) -> Tensor:
    return Tensor._make(np.zeros_like(param._data))


def _new_step() -> Tensor:
    """``state['step']`` of a fresh parameter state: a 0-dim tensor, as torch keeps it."""
    return Tensor._make(np.zeros((), _scalar_dtype()))


def _increment_step(state: dict) -> float:
    """``state['step'] += 1`` in place (recorded as a change); returns the new count."""
    step = state["step"]
    step._data += 1
    _bump(step)
    return float(step._data)


def _step_as_tensor(state: Optional[dict]) -> None:
    """Old checkpoints stored ``step`` as a number; torch keeps it as a 0-dim tensor."""
    if state and "step" in state and not isinstance(state["step"], Tensor):
        state["step"] = Tensor._make(np.asarray(float(state["step"]), _scalar_dtype()))


def _check_nonnegative(what: str, value: Any, *, nan_ok: bool = False) -> None:
    """torch's ``if not 0.0 <= value`` check, which refuses NaN too; ``nan_ok`` is the
    ``value < 0.0`` form (SGD's), under which NaN passes."""
    refused = value < 0.0 if nan_ok else not 0.0 <= value
    if refused:
        raise ValueError(f"Invalid {what}: {value}")


def _check_tensor_lr(lr: Any) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def _lerp_(target: np.ndarray, end: np.ndarray, weight: float) -> None:
    """torch's lerp: ``self + w*(end - self)`` for |w| < 0.5, else ``end - (end - self)*(1 - w)``
    (the second form is the accurate one near w = 1)."""
    kind = target.dtype.type
    w = kind(weight)
    if abs(weight) < 0.5:
        target += w * (end - target)
    else:
        target[...] = end - (end - target) * (kind(1) - w)


def _with_step_hooks(step: Callable) -> Callable:
    """Wrap a class's ``step`` so global and per-optimizer pre/post hooks run around it."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        # as in torch, ``args`` seen by the hooks starts with the optimizer itself
        self = args[0]
        if _global_step_pre_hooks or self._optimizer_step_pre_hooks:
            for pre_hook in list(chain(_global_step_pre_hooks.values(),
                                       self._optimizer_step_pre_hooks.values())):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
        out = step(*args, **kwargs)
        # read after the step, as torch does: a hook the step (or a pre-hook) added runs too
        if self._optimizer_step_post_hooks or _global_step_post_hooks:
            for post_hook in list(chain(self._optimizer_step_post_hooks.values(),
                                        _global_step_post_hooks.values())):
                post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class of all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts that each
    define a parameter group (``{"params": [...], "lr": ...}``); ``defaults`` fills the options a
    group does not set. ``state`` maps each parameter to its dict of running buffers.
    """

    def __init__(self, params: ParamsT, defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: "OrderedDict[int, StepPreHook]" = OrderedDict()
        self._optimizer_step_post_hooks: "OrderedDict[int, StepPostHook]" = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + legacy_type_name(params._data))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        given = list(params)
        if not given:
            raise ValueError("optimizer got an empty parameter list")
        # Tensors make up one group between them; dicts are a group each.
        for group in given if isinstance(given[0], dict) else [{"params": given}]:
            self.add_param_group(group)

    def _patch_step_function(self) -> None:
        # Like torch: the class's step is wrapped once, on first construction, so hooks run
        # however step is reached (bound method, super() from a subclass's own step aside).
        cls = type(self)
        if not getattr(cls.step, "hooked", False):
            cls.step = _with_step_hooks(cls.step)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # -- groups ---------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group (e.g. layers unfrozen while fine-tuning); unset options take defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warn("optimizer contains a parameter group with duplicate parameters; in "
                 "future, this will cause an error; see "
                 "github.com/pytorch/pytorch/issues/40967 for more information")
        seen: set = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients ------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop the gradients (``None``: the next step skips parameters that got no gradient), or
        zero them in place when ``set_to_none=False``."""
        for group in self.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if set_to_none:
                    param._grad = None  # (the setter's whole work for None)
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad._data[...] = 0
                _bump(grad)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """One update of every parameter that has a gradient; ``closure`` re-evaluates the
        loss (with grad mode on) and its value is returned."""
        raise NotImplementedError

    def _evaluate(self, closure: Optional[Callable[[], Any]]) -> Any:
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    # -- hooks ----------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: StepPreHook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` runs before this
        optimizer's ``step``; ``args`` is ``(optimizer, *step_args)`` and a returned pair
        replaces them. Example:
        ``h = opt.register_step_pre_hook(lambda opt, args, kwargs: None)``; ``h.remove()``."""
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: StepPostHook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None`` runs after this optimizer's ``step``."""
        return add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[["Optimizer"], None],
                                     prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer) -> None`` runs before ``state_dict`` builds its dict."""
        return add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend=prepend)

    def register_state_dict_post_hook(self, hook: Callable[["Optimizer", dict], Optional[dict]],
                                      prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> dict | None``: a returned dict replaces the result."""
        return add_hook(self._optimizer_state_dict_post_hooks, hook, prepend=prepend)

    def register_load_state_dict_pre_hook(
            self, hook: Callable[["Optimizer", dict], Optional[dict]],
            prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> dict | None``: a returned dict is loaded instead."""
        return add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend=prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[["Optimizer"], None],
                                           prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer) -> None`` runs after ``load_state_dict`` has loaded."""
        return add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend=prepend)

    # -- checkpoints ----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Parameters are numbered in group order, so the dict holds no parameter; the state's
        tensors are the live buffers (not copies), as in torch.
        """
        for pre_hook in list(self._optimizer_state_dict_pre_hooks.values()):
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group: dict) -> dict:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        result = {"state": packed_state, "param_groups": groups}
        for post_hook in list(self._optimizer_state_dict_post_hooks.values()):
            replaced = post_hook(self, result)
            if replaced is not None:
                result = replaced
        return result

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a dict made by ``state_dict``: saved indices are matched to this optimizer's
        parameters by position; state tensors are cast to their parameter's float dtype."""
        state_dict = state_dict.copy()
        for pre_hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            replaced = pre_hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param: Tensor, value: Any, key: Any = None) -> Any:
            if isinstance(value, Tensor):
                if key != "step" and param.is_floating_point():
                    return value.to(dtype=param.dtype)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = cast(param, value)
            else:
                state[key] = value

        def update_group(group: dict, new_group: dict) -> dict:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            post_hook(self)

    # -- shared by the subclasses -------------------------------------------------------------
    @staticmethod
    def _params_with_grad(group: dict) -> list[Tensor]:
        """The group's parameters that have a gradient; the others are skipped, as in torch."""
        return [param for param in group["params"] if param.grad is not None]

    def _step_each(self, closure: Optional[Callable[[], Any]],
                   group_options: Callable[[dict], tuple],
                   init_state: Optional[Callable[[Tensor, dict, dict], None]],
                   update: Callable[..., None]) -> Any:
        """torch's for-loop step: evaluate ``closure``, then under no_grad, for each parameter
        with a gradient, ``init_state(param, state, group)`` on its first step and
        ``update(param, state, *group_options(group))``. Returns the closure's loss."""
        loss = self._evaluate(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                options = group_options(group)
                for param in self._params_with_grad(group):
                    state = self.state[param]
                    if init_state is not None and len(state) == 0:
                        init_state(param, state, group)
                    update(param, state, *options)
        return loss

    def _upgrade_state(self, **defaults: Any) -> None:
        """After unpickling: fill the options an older optimizer's groups lack and turn a
        numeric ``step`` into the 0-dim tensor torch keeps (``__setstate__`` of subclasses)."""
        self._setdefault_groups(**defaults)
        for group in self.param_groups:
            for param in group["params"]:
                _step_as_tensor(self.state.get(param))

    def _setdefault_groups(self, **defaults: Any) -> None:
        """Fill the options an older pickled optimizer's groups lack (``__setstate__``)."""
        for group in self.param_groups:
            for key, value in defaults.items():
                group.setdefault(key, value)


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return legacy_type_name(obj._data)
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def _reject_differentiable(differentiable: bool) -> None:
    if differentiable:
        raise ValueError("hookgrad optimizers do not support differentiable=True: the step "
                         "always runs under no_grad")
