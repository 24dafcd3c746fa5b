"""torch.func's function transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
functional_call and vmap.

torch builds these on functorch's levels; here each transform is a thin layer over the ordinary
reverse-mode engine, which is what makes them compose (``grad(grad(f))``, ``vmap(grad(f))``,
``hessian``): a transform runs ``f`` on fresh leaves (or on views of inputs that already require
grad, so an outer transform or an outer ``backward`` can see through it), always with
``create_graph=True``, and detaches its result only when none of the caller's inputs required
grad. What differs from torch:

* ``jvp`` and ``jacfwd`` use reverse mode (the double-vjp trick and one backward per output
  element), so their values equal torch's to rounding, not bit for bit;
* ``vmap`` calls ``f`` once per batch entry and stacks the results (``chunk_size`` and
  ``randomness`` are accepted but change nothing): results are identical to a vectorised run,
  it is just slower.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple, Union

from . import autograd
from ._func_more import (functionalize, linearize_with,  # noqa: F401
                         replace_all_batch_norm_modules_, stack_module_state)
from .tensor import Tensor

__all__ = ["functional_call", "functionalize", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "replace_all_batch_norm_modules_",
           "stack_module_state", "vjp", "vmap"]

ArgNums = Union[int, Tuple[int, ...]]


# -- shared plumbing --------------------------------------------------------------------------
def _leaf(value: Any) -> Any:
    """A differentiable stand-in for one input: a view when it already has history (so the
    outer graph sees through), else a fresh leaf."""
    if not isinstance(value, Tensor):
        return value
    if value.requires_grad:
        return value.view_as(value)
    return value.detach().requires_grad_(True)


def _check_argnums(argnums: ArgNums, count: int) -> Tuple[int, ...]:
    chosen = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not chosen:
        raise RuntimeError("argnums must be non-empty")
    for argnum in chosen:
        if not isinstance(argnum, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnum)}")
        if not -count <= argnum < count:
            raise RuntimeError(f"Got argnum={argnum}, but only {count} positional inputs")
    return tuple(a % count for a in chosen)


def _outer_wants_graph(values: Sequence[Any]) -> bool:
    return any(isinstance(v, Tensor) and v.requires_grad for v in values)


def _finish(value: Any, keep_graph: bool) -> Any:
    """Detach a result (tensors inside tuples and lists too) unless the caller's graph needs it."""
    if isinstance(value, Tensor):
        return value if keep_graph else value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(_finish(v, keep_graph) for v in value)
    if isinstance(value, dict):
        return {k: _finish(v, keep_graph) for k, v in value.items()}
    return value


def _grads(outputs: Sequence[Tensor], inputs: Sequence[Tensor],
           grad_outputs: Optional[Sequence[Any]] = None) -> tuple:
    """``autograd.grad`` keeping the graph, with zeros for inputs the outputs do not reach."""
    live = [(o, g) for o, g in zip(outputs, grad_outputs or [None] * len(outputs))
            if o.requires_grad]
    if not live:
        return tuple(x.detach() * 0 for x in inputs)
    found = autograd.grad([o for o, _ in live], inputs,
                          None if grad_outputs is None else [g for _, g in live],
                          create_graph=True, allow_unused=True)
    return tuple(x.detach() * 0 if g is None else g for g, x in zip(found, inputs))


def _split_aux(result: Any, has_aux: bool, name: str) -> Tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{name}(f, ...)(*args): output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return result


def _flat(value: Any, name: str) -> Tuple[list, bool]:
    """Tensors of an output that is a tensor or a tuple/list of tensors; whether it was one."""
    if isinstance(value, Tensor):
        return [value], True
    if isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value):
        return list(value), False
    raise RuntimeError(f"{name}: Expected f to be a function that has a Tensor or a tuple of "
                       f"Tensors as output, got {type(value).__name__}")


# -- gradients ----------------------------------------------------------------------------------
def grad_and_value(func: Callable, argnums: ArgNums = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of scalar ``func`` with respect to the
    arguments at ``argnums`` (a tuple of gradients for a tuple of argnums); with ``has_aux``
    ``func`` returns ``(value, aux)`` and the result is ``(gradient, (value, aux))``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        chosen = _check_argnums(argnums, len(args))
        keep = _outer_wants_graph(args)
        with autograd.enable_grad():
            args = tuple(_leaf(a) if i in chosen else a for i, a in enumerate(args))
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(output, Tensor) or output.dim() != 0:
                dims = output.dim() if isinstance(output, Tensor) else type(output).__name__
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {dims} dims. Maybe you wanted to use the vjp or jacrev "
                    "APIs instead?")
            grads = _grads([output], [args[i] for i in chosen])
        result = grads[0] if isinstance(argnums, int) else grads
        value = (output, aux) if has_aux else output
        return _finish(result, keep), _finish(value, keep)

    return wrapper


def grad(func: Callable, argnums: ArgNums = 0, has_aux: bool = False) -> Callable:
    """The gradient of scalar ``func`` as a function of the same arguments (see
    ``grad_and_value``; with ``has_aux`` it returns ``(gradient, aux)``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradient, value = grad_and_value(func, argnums, has_aux)(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns one gradient per primal (a
    tuple, always). With ``has_aux``: ``(output, vjp_fn, aux)``."""
    keep = _outer_wants_graph(primals)
    with autograd.enable_grad():
        inputs = tuple(_leaf(p) for p in primals)
        output, aux = _split_aux(func(*inputs), has_aux, "vjp")
    outputs, single = _flat(output, "vjp")

    def vjp_fn(cotangents: Any) -> tuple:
        cotangent_list = [cotangents] if single else list(cotangents)
        if len(cotangent_list) != len(outputs):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function, got "
                               f"{len(cotangent_list)} cotangents for {len(outputs)} outputs")
        with autograd.enable_grad():
            grads = _grads(outputs, inputs, cotangent_list)
        return _finish(grads, keep or _outer_wants_graph(cotangent_list))

    result = (_finish(output, keep), vjp_fn)
    return result + (_finish(aux, keep),) if has_aux else result


def jvp(func: Callable, primals: Sequence[Any], tangents: Sequence[Any], *,
        strict: bool = False, has_aux: bool = False) -> tuple:
    """``(func(*primals), J @ tangents)``, computed in reverse mode by differentiating
    ``u -> vjp(u)`` with respect to ``u`` (values equal torch's forward mode to rounding)."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be "
                           "tuples")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure")
    keep = _outer_wants_graph(primals) or _outer_wants_graph(tangents)
    with autograd.enable_grad():
        inputs = tuple(_leaf(p) for p in primals)
        output, aux = _split_aux(func(*inputs), has_aux, "jvp")
        outputs, single = _flat(output, "jvp")
        dummies = [o.detach().new_zeros(o.shape).requires_grad_(True) for o in outputs]
        pulled = _grads(outputs, inputs, dummies)
        pairs = [(p, t) for p, t in zip(pulled, tangents) if p.requires_grad]
        pushed = _grads([p for p, _ in pairs], dummies, [t for _, t in pairs])
    result = (_finish(output, keep), _finish(pushed[0] if single else pushed, keep))
    return result + (_finish(aux, keep),) if has_aux else result


def linearize(func: Callable, *primals: Any) -> Tuple[Any, Callable]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian of ``func`` at
    ``primals`` applied to tangents of the primals' structure, shapes and dtypes (computed by
    ``jvp`` at each call)."""
    return linearize_with(jvp, func, *primals)


# -- Jacobians and Hessians ---------------------------------------------------------------------
def _jacobian(func: Callable, argnums: ArgNums, has_aux: bool, name: str) -> Callable:
    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        chosen = _check_argnums(argnums, len(args))
        keep = _outer_wants_graph(args)
        with autograd.enable_grad():
            args = tuple(_leaf(a) if i in chosen else a for i, a in enumerate(args))
            output, aux = _split_aux(func(*args), has_aux, name)
            outputs, single = _flat(output, name)
            inputs = [args[i] for i in chosen]
            per_output = []
            for out in outputs:
                flat = out.reshape(-1)
                rows = [_grads([flat[k]], inputs) for k in range(flat.shape[0])]
                blocks = []
                for j, x in enumerate(inputs):
                    shape = tuple(out.shape) + tuple(x.shape)
                    if rows:
                        blocks.append(_stack([row[j] for row in rows]).reshape(shape))
                    else:
                        blocks.append(x.detach().new_zeros(shape))
                per_output.append(blocks[0] if isinstance(argnums, int) else tuple(blocks))
        result = per_output[0] if single else tuple(per_output)
        if has_aux:
            return _finish(result, keep), _finish(aux, keep)
        return _finish(result, keep)

    return wrapper


def _stack(tensors: Sequence[Tensor]) -> Tensor:
    from . import stack  # the package face, loaded after this module

    return stack(list(tensors))


def jacrev(func: Callable, argnums: ArgNums = 0, *, has_aux: bool = False,
           chunk_size: Optional[int] = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, one backward per
    output element; shaped ``output.shape + input.shape``."""
    return _jacobian(func, argnums, has_aux, "jacrev")


def jacfwd(func: Callable, argnums: ArgNums = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian as ``jacrev`` gives it (computed in reverse mode here; the values are
    torch's forward-mode ones to rounding)."""
    return _jacobian(func, argnums, has_aux, "jacfwd")


def hessian(func: Callable, argnums: ArgNums = 0) -> Callable:
    """The Hessian of scalar ``func``: the Jacobian of its Jacobian."""
    return jacfwd(jacrev(func, argnums), argnums)


# -- modules as functions -----------------------------------------------------------------------
def _owner(module: Any, name: str) -> Tuple[Any, str]:
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


@contextmanager
def _swapped(module: Any, values: Dict[str, Tensor], tie_weights: bool) -> Iterator[None]:
    """Put ``values`` in place of the named parameters and buffers; restore them afterwards."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(dict(module.named_buffers(remove_duplicate=False)))
    if tie_weights:  # a tensor shared under several names takes the value given for any of them
        by_identity = {id(named[k]): v for k, v in values.items() if k in named}
        values = {**{k: by_identity[id(t)] for k, t in named.items() if id(t) in by_identity},
                  **values}
    saved = []
    try:
        for name, value in values.items():
            owner, leaf = _owner(module, name)
            store = owner._buffers if leaf in owner._buffers else owner._parameters
            if leaf not in store:
                store = owner.__dict__
            saved.append((store, leaf, store.get(leaf, _MISSING)))
            store[leaf] = value
        yield
    finally:
        for store, leaf, old in reversed(saved):
            if old is _MISSING:
                store.pop(leaf, None)
            else:
                store[leaf] = old


_MISSING = object()


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: Optional[dict] = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module`` with the given tensors standing in for its parameters and buffers (by
    their ``named_parameters`` names), leaving the module unchanged afterwards: the way to
    differentiate a model's output with respect to weights passed as plain arguments."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        values = dict(dicts)
    else:
        values = {}
        for part in dicts:
            repeated = set(values) & set(part)
            if repeated:
                raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; "
                                 "behavior of functional call is ambiguous")
            values.update(part)
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {n for n, _ in
                                                                 module.named_buffers()}
        missing, unexpected = sorted(expected - set(values)), sorted(set(values) - expected)
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               f"Missing key(s): {missing}.\n\tUnexpected key(s): {unexpected}.")
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    with _swapped(module, values, tie_weights):
        return module(*args, **(kwargs or {}))


# -- batching ---------------------------------------------------------------------------------
def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: Optional[int] = None) -> Callable:
    """``func`` mapped over a batch dimension of its tensor arguments (``in_dims``: one int or
    None for all, or one per argument) and stacked along ``out_dims`` of its outputs. Runs
    ``func`` once per batch entry: identical results to a vectorised map, more Python calls."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        dims = _in_dims(in_dims, args, func)
        sizes = {a.shape[d] for a, d in zip(args, dims) if d is not None}
        if not sizes:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least "
                             "one input must be a Tensor mapped over a dimension (in_dims not "
                             "None)")
        if len(sizes) > 1:
            got = [a.shape[d] for a, d in zip(args, dims) if d is not None]
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {got} for the mapped dimension")
        batch = sizes.pop()
        results = [func(*[a.select(d, b) if d is not None else a for a, d in zip(args, dims)],
                        **kwargs) for b in range(batch)]
        return _stack_outputs(results, out_dims, func)

    return wrapper


def _name(func: Callable) -> str:
    return getattr(func, "__name__", repr(func))


def _in_dims(in_dims: Any, args: tuple, func: Callable) -> list:
    if isinstance(in_dims, (int, type(None))):
        dims = [in_dims] * len(args)
    else:
        if len(in_dims) != len(args):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is "
                             f"not compatible with the structure of `inputs`. in_dims has "
                             f"structure {len(in_dims)} but inputs has structure {len(args)}.")
        dims = list(in_dims)
    checked = []
    for arg, dim in zip(args, dims):
        if dim is None or not isinstance(arg, Tensor):
            checked.append(None if not isinstance(arg, Tensor) else dim)
            continue
        if not -arg.dim() <= dim < arg.dim():
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={dim} for some input, but that input is a Tensor of "
                             f"dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        checked.append(dim % arg.dim())
    return checked


def _stack_outputs(results: list, out_dims: Any, func: Callable) -> Any:
    from . import stack  # the package face, loaded after this module

    first = results[0]
    if isinstance(first, Tensor):
        return stack(results, dim=out_dims if isinstance(out_dims, int) else out_dims[0])
    if isinstance(first, (tuple, list)):
        dims = [out_dims] * len(first) if isinstance(out_dims, int) else list(out_dims)
        return type(first)(stack([r[i] for r in results], dim=d)
                           for i, d in enumerate(dims))
    raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got "
                     f"type {type(first)}. Did you mean to set out_dims= to None for output?")
