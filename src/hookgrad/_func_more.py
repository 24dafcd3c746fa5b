"""More of torch.func: ``linearize`` (its body) and ``functionalize`` (transforms of a function) and
``stack_module_state`` / ``replace_all_batch_norm_modules_`` (preparing modules for ``vmap``).

``functionalize`` is the identity here: hookgrad runs in-place ops eagerly, and torch's
functionalized program is required to leave the same values in the outputs and the inputs.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Sequence, Tuple

from . import autograd
from .tensor import Tensor

_REMOVALS = ("mutations", "mutations_and_views")


def _flatten(tree: Any) -> Tuple[List[Any], Any]:
    """Leaves of nested tuples, lists and dicts, and the nesting to rebuild them."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(item) for item in tree]
        return [leaf for p in parts for leaf in p[0]], (type(tree), None, [p[1] for p in parts])
    if isinstance(tree, dict):
        parts = [_flatten(tree[key]) for key in tree]
        return [leaf for p in parts for leaf in p[0]], (dict, list(tree), [p[1] for p in parts])
    return [tree], None


def _rebuild(spec: Any, leaves: List[Any]) -> Any:
    position = [0]

    def build(node: Any) -> Any:
        if node is None:
            position[0] += 1
            return leaves[position[0] - 1]
        kind, keys, children = node
        values = [build(child) for child in children]
        return dict(zip(keys, values)) if kind is dict else kind(values)

    return build(spec)


def _spec_text(spec: Any) -> str:
    if spec is None:
        return "*"
    kind, keys, children = spec
    return f"TreeSpec({kind.__name__}, {keys}, [{', '.join(_spec_text(c) for c in children)}])"


def linearize_with(jvp: Callable, func: Callable, *primals: Any) -> Tuple[Any, Callable]:
    """``func.linearize`` computed with the given ``jvp`` transform (``func.jvp``)."""
    output = func(*primals)
    leaves, spec = _flatten(primals)

    def jvp_fn(*tangents: Any) -> Any:
        tangent_leaves, tangent_spec = _flatten(tangents)
        if tangent_spec != spec:
            raise RuntimeError(f"Expected the tangents {_spec_text(tangent_spec)} to have the "
                               f"same argspec as the primals {_spec_text(spec)}")
        for index, (tangent, primal) in enumerate(zip(tangent_leaves, leaves)):
            if not isinstance(primal, Tensor):
                continue
            if tangent.shape != primal.shape:
                raise RuntimeError(f"tangent:{index} with shape {tangent.shape} in flattened "
                                   "pytree doesn't match the shape "
                                   f"{primal.shape} of the corresponding primal.")
            if tangent.dtype != primal.dtype:
                raise RuntimeError(f"tangent:{index} with dtype {tangent.dtype} in flattened "
                                   "pytree doesn't match the dtype "
                                   f"{primal.dtype} of the corresponding primal.")

        def flat_func(*flat: Any) -> Any:
            return func(*_rebuild(spec, list(flat)))

        detached = tuple(p.detach() if isinstance(p, Tensor) else p for p in leaves)
        with autograd.enable_grad():
            _, pushed = jvp(flat_func, detached, tuple(t.detach() for t in tangent_leaves))
        return _detach_tree(pushed)

    return output, jvp_fn


def _detach_tree(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(_detach_tree(v) for v in value)
    return value


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` with its mutations (and, with ``remove="mutations_and_views"``, its views)
    turned into out-of-place ops by torch; run eagerly here, which gives the same outputs and
    leaves the inputs changed as torch copies the mutations back."""
    if remove not in _REMOVALS:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n     remove='mutations': all inplace and "
            "out= operators will be removed from the program, and replaced with their "
            "out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing "
            "counterparts, {view}_copy.\n")
    if remove == "mutations":
        return functools.wraps(func)(lambda *args, **kwargs: func(*args, **kwargs))

    @functools.wraps(func)
    def without_views(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        inputs = [a for a in _flatten((args, kwargs))[0] if isinstance(a, Tensor)]
        leaves, spec = _flatten(result)
        # a view of an input becomes a copy; an input returned as itself stays itself
        copies = [leaf.clone() if isinstance(leaf, Tensor) and all(
            leaf is not x for x in inputs) and any(
            leaf.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
            for x in inputs) else leaf for leaf in leaves]
        return _rebuild(spec, copies)

    return without_views


# -- modules ----------------------------------------------------------------------------------
def stack_module_state(models: Sequence[Any]) -> Tuple[Dict[str, Tensor], Dict[str, Tensor]]:
    """``(params, buffers)``: each parameter and buffer of ``models`` (all of one class and one
    training mode) stacked along a new leading dim, by name. The stacked parameters are new
    leaves that require grad when the models' parameters do; buffers are stacked as they are."""
    from .ops.join import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named: List[Dict[str, Tensor]], check_grad: bool) -> Dict[str, Tensor]:
        result = {}
        for name in named[0]:
            tensors = [entry[name] for entry in named]
            wants = tensors[0].requires_grad
            if check_grad and any(t.requires_grad != wants for t in tensors):
                raise RuntimeError(f"Expected {name} from each model to have the same "
                                   ".requires_grad")
            value = stack([t.detach() for t in tensors])
            result[name] = value.requires_grad_(True) if check_grad and wants else value
        return result

    params = stacked([dict(m.named_parameters()) for m in models], True)
    buffers = stacked([dict(m.named_buffers()) for m in models], False)
    return params, buffers


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Make every batch norm in ``root`` stop tracking running statistics (its running mean,
    variance and batch count become None), in place, so it normalises with the statistics of
    each batch; returns ``root``. Instance norms are left as they are, as in torch."""
    from .nn.modules.instancenorm import _InstanceNorm
    from .nn.modules.normalization import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
