"""Module backward hooks routed through identity Functions, so the engine knows no module.

``Module.__call__`` passes the module's tensor inputs through one ``BackwardHookFunction`` and its
outputs through another. The output node's post-hook sees ``grad_output`` (and runs the backward
pre-hooks, which may replace it); the input node's post-hook then sees ``grad_input`` and runs the
full backward hooks, which may replace it. This is torch's design (``torch.utils.hooks``).
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, List, Optional, Sequence

import numpy as np

from ..._warnings import warn
from ...autograd import grad_mode
from ...autograd.function import Function
from ...tensor import Tensor


class BackwardHookFunction(Function):
    """Identity on its tensor arguments; its node is where a module's gradients are observed."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grad_outputs):
        return grad_outputs


def _identity_outputs(tensors: Sequence[Tensor]) -> tuple:
    # Each output is an input returned as-is by a custom Function: a view that must not be
    # modified in place (torch: "Output 0 of BackwardHookFunction is a view and is being
    # modified inplace"), whose history cannot be rebuilt once its base changed (the core's
    # alias refuses both).
    return BackwardHookFunction.apply(*tensors)


def _zeros_for_unneeded(unneeded: List[bool], grad_input: tuple, metas: list) -> tuple:
    """torch's hook sees zeros (the materialized gradient of the non-differentiable output) for
    a tensor input that needs no gradient; hookgrad's engine has already dropped those to None
    before post-hooks, so rebuild them from the inputs' shapes."""
    return tuple(Tensor._make(np.zeros(*metas[i])) if grad is None and unneeded[i] else grad
                 for i, grad in enumerate(grad_input))


class WrappedHook:
    """A node hook that calls ``hook(module, *args)``, holding the module weakly; with
    ``module=None`` it calls ``hook(*args)`` (torch wraps every private load-state-dict pre-hook
    so, which is why ``remove_spectral_norm`` cannot find its own by type)."""

    __slots__ = ("hook", "module", "__weakref__")

    def __init__(self, hook: Callable, module: Any) -> None:
        self.hook = hook
        self.module = None if module is None else weakref.ref(module)

    @property
    def __name__(self) -> str:
        return getattr(self.hook, "__name__", type(self.hook).__name__)

    def __call__(self, *args: Any) -> Any:
        if self.module is None:
            return self.hook(*args)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args)

    # copies and pickles hold the module strongly, so a deep-copied module's hook refers to the
    # copy (torch's _WrappedHook does the same)
    def __getstate__(self) -> dict:
        return {"hook": self.hook, "module": self.module and self.module(),
                "with_module": self.module is not None}

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        if not state.get("with_module", True):
            self.module = None
            return
        if state["module"] is None:
            raise RuntimeError("You are trying to revive the hook of a dead Module!")
        self.module = weakref.ref(state["module"])


class BackwardHook:
    """One module call's backward hooks: wraps its inputs and outputs and pairs their gradients."""

    def __init__(self, module: Any, user_hooks: List[Callable],
                 user_pre_hooks: List[Callable]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: Optional[tuple] = None
        self.n_outputs = -1
        self.output_tensors_index: Optional[List[int]] = None
        self.n_inputs = -1
        self.input_tensors_index: Optional[List[int]] = None

    @staticmethod
    def _pack_with_none(indices: Sequence[int], values: Sequence, size: int) -> tuple:
        result: list = [None] * size
        for index, value in zip(indices, values):
            result[index] = value
        return tuple(result)

    def _apply_on_tensors(self, args: tuple):
        """Route the tensors among ``args`` through one identity node; return the new args,
        the tensor positions and the node (``None, None`` when no gradient will flow)."""
        indices = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        tensors = [args[i] for i in indices]
        if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
            return args, None, None
        wrapped = _identity_outputs(tensors)
        node = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
        items = list(args)
        for index, tensor in zip(indices, wrapped):
            items[index] = tensor
        new_args = tuple(items) if type(args) is tuple else type(args)(*items)
        return new_args, indices, node

    # -- inputs: the full backward hooks ----------------------------------------------------
    def setup_input_hook(self, args: tuple) -> tuple:
        result, indices, node = self._apply_on_tensors(args)
        if node is not None:
            metas = [(args[i]._data.shape, args[i]._data.dtype) for i in indices]
            self._register_input_hook(node, metas)
        self.n_inputs = len(args)
        self.input_tensors_index = indices
        return result

    def _register_input_hook(self, node, metas: list) -> None:
        # the hook must not refer to the node that holds it (no cycle: the graph frees by
        # reference counting as soon as backward is done)
        unneeded = [edge[0] is None for edge in node.next_functions]

        def hook(grad_input: tuple, _grad_output: tuple):
            if self.grad_outputs is None:
                # the gradient reached the inputs without passing the outputs (double backward)
                return None
            grad_input = _zeros_for_unneeded(unneeded, grad_input, metas)
            grads = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, grads, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(grads):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(grads)}")
                grads = out
            self.grad_outputs = None
            return tuple(grads[i] for i in self.input_tensors_index)

        node.register_hook(hook)

    # -- outputs: the backward pre-hooks ----------------------------------------------------
    def setup_output_hook(self, result: Any) -> Any:
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        wrapped, indices, node = self._apply_on_tensors(args)
        if node is not None:
            self._register_output_hook(node)
        self.n_outputs = len(args)
        self.output_tensors_index = indices
        return wrapped if is_tuple else wrapped[0]

    def _register_output_hook(self, node) -> None:
        def hook(_grad_input: tuple, grad_output: tuple):
            self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                     self.n_outputs)
            if self.user_pre_hooks:
                expected = len(self.grad_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    replaced = user_pre_hook(self.module, self.grad_outputs)
                    if replaced is None:
                        continue
                    if len(replaced) != expected:
                        raise RuntimeError("Backward pre hook returned an invalid number of "
                                           f"grad_output, got {len(replaced)}, but expected "
                                           f"{expected}")
                    self.grad_outputs = replaced
            local_grad_outputs = self.grad_outputs
            if self.input_tensors_index is None:
                # no input needs a gradient: the full hooks fire here, with grad_input all None
                warn("Full backward hook is firing when gradients are computed with "
                     "respect to module outputs since no inputs require gradients. See "
                     "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                     "#torch.nn.Module.register_full_backward_hook for more details.")
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if out is not None and not (isinstance(out, tuple)
                                                and all(g is None for g in out)):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for all "
                                           "gradients.")
                self.grad_outputs = None
            return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

        node.register_hook(hook)


def warn_if_legacy_hook_misses_gradients(inputs: Any, result: Any, node: Any) -> None:
    """torch's FutureWarnings for the cases where the legacy hook sees the wrong gradients."""
    advice = "Please use register_full_backward_hook to get the documented behavior."
    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        warn("Using non-full backward hooks on a Module that does not return a single "
             "Tensor or a tuple of Tensors is deprecated and will be removed in "
             "future versions. This hook will be missing some of the grad_output. "
             + advice, FutureWarning)
        return
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
        warn("Using non-full backward hooks on a Module that does not take as input a "
             "single Tensor or a tuple of Tensors is deprecated and will be removed "
             "in future versions. This hook will be missing some of the grad_input. "
             + advice, FutureWarning)
        return
    output_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not output_nodes or (len(output_nodes) == 1 and node not in output_nodes):
        warn("Using a non-full backward hook when outputs are nested in python data "
             "structure is deprecated and will be removed in future versions. This "
             "hook will be missing some grad_output.", FutureWarning)
    elif len(output_nodes) > 1:
        warn("Using a non-full backward hook when outputs are generated by different "
             "autograd Nodes is deprecated and will be removed in future versions. "
             "This hook will be missing some grad_output. " + advice,
             FutureWarning)
    else:
        input_nodes = {i.grad_fn for i in inputs if i.grad_fn is not None}
        if input_nodes != {edge[0] for edge in node.next_functions}:
            warn("Using a non-full backward hook when the forward contains multiple "
                 "autograd Nodes is deprecated and will be removed in future "
                 "versions. This hook will be missing some grad_input. " + advice,
                 FutureWarning)
