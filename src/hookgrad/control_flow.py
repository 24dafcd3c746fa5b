"""``cond`` and ``while_loop``, torch's structured control flow, run eagerly.

torch traces both branches (and the loop body) to check that they agree before running; here
the branch taken (or the loop) runs as plain Python, and the checks torch makes on the traced
functions are made on what they return: the same nesting of tuples, lists and dicts, tensors of
the same rank and dtype, no output that aliases an input, no input changed in place while
gradients are recorded. For a tensor predicate the branch not taken is run once without
gradients to compare its outputs, as torch's tracing runs it.
"""
from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple

from .autograd import grad_mode
from .autograd.function import Function
from .tensor import Tensor, root_array


class _RecordedOp(Function):
    """Identity on the outputs that carry gradients, so that they show torch's node for the
    whole construct (``CondAutogradOpBackward``, ``WhileLoopAutogradOpBackward``) with the
    branch's or body's own history below it."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors[0].clone() if len(tensors) == 1 else tuple(t.clone() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return grads


class CondAutogradOp(_RecordedOp):
    """``cond``'s node."""


class WhileLoopAutogradOp(_RecordedOp):
    """``while_loop``'s node."""


def _recorded(result: Any, op: type) -> Any:
    """``result`` with each tensor that requires grad passed through ``op``."""
    leaves, _ = _leaves(result)
    chosen = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor) and
              leaf.requires_grad]
    if not chosen or not grad_mode.is_grad_enabled():
        return result
    made = op.apply(*[leaves[i] for i in chosen])
    made = made if isinstance(made, tuple) else (made,)
    replaced = dict(zip(chosen, made))
    return _rebuilt(result, iter([replaced.get(i, leaf) for i, leaf in enumerate(leaves)]))


def _rebuilt(tree: Any, leaves: Any) -> Any:
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuilt(item, leaves) for item in tree)
    if isinstance(tree, dict):
        return {key: _rebuilt(value, leaves) for key, value in tree.items()}
    return next(leaves)


def _leaves(tree: Any) -> Tuple[List[Any], Any]:
    """The leaves of nested tuples, lists and dicts, and a description of the nesting."""
    if isinstance(tree, (tuple, list)):
        parts = [_leaves(item) for item in tree]
        return [leaf for p in parts for leaf in p[0]], (type(tree), [p[1] for p in parts])
    if isinstance(tree, dict):
        parts = [_leaves(tree[key]) for key in tree]
        return ([leaf for p in parts for leaf in p[0]],
                (dict, list(tree), [p[1] for p in parts]))
    return [tree], None


def _aliases(output: Tensor, inputs: Sequence[Any]) -> bool:
    memory = root_array(output._data)
    return any(isinstance(x, Tensor) and (x is output or root_array(x._data) is memory)
               for x in inputs)


def _check_outputs(outputs: List[Any], inputs: List[Any], versions: List[Any],
                   op: str) -> None:
    for output in outputs:
        if isinstance(output, Tensor) and _aliases(output, inputs):
            raise RuntimeError(f"{op}: Higher order ops do not support aliasing: an output of "
                               "a branch is (or views) one of its inputs; return a clone")
    if grad_mode.is_grad_enabled():
        for x, version in zip(inputs, versions):
            if isinstance(x, Tensor) and x._version != version:
                raise RuntimeError(f"{op}: Higher order ops do not support input mutation: "
                                   "an input was changed in place; clone it first")


def _versions(inputs: List[Any]) -> List[Any]:
    return [x._version if isinstance(x, Tensor) else None for x in inputs]


def _copied(tree: Any, detach: bool = True) -> Any:
    """Nested tuples, lists and dicts with each tensor copied (and detached, by default)."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(_copied(item, detach) for item in tree)
    if isinstance(tree, dict):
        return {key: _copied(value, detach) for key, value in tree.items()}
    if isinstance(tree, Tensor):
        return (tree.detach() if detach else tree).clone()
    return tree


# -- cond ---------------------------------------------------------------------------------------
def _check_pred(pred: Any) -> None:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
    elif not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")


def _check_branch_output(leaf: Any) -> None:
    if isinstance(leaf, (Tensor, int)):
        return
    if isinstance(leaf, float):
        raise RuntimeError("torch.cond: HigherOrderOperator body's output must consist of "
                           f"tensors or ints/bools only but got {type(leaf)}.")
    raise RuntimeError("torch.cond: unsupported branch return type (constant non-int): "
                       "constants returned from branches must be ints")


def _merge_check(taken: Any, other: Any) -> None:
    """torch's check that both branches give outputs of one kind."""
    taken_leaves, taken_spec = _leaves(taken)
    other_leaves, other_spec = _leaves(other)
    for leaf in taken_leaves + other_leaves:
        _check_branch_output(leaf)
    if taken_spec != other_spec:
        raise RuntimeError("Unmatched output spec from torch.cond branches: the true and false "
                           "branches return different nestings of outputs")
    for a, b in zip(taken_leaves, other_leaves):
        if isinstance(a, Tensor) != isinstance(b, Tensor):
            raise RuntimeError("When merging two branches' output in torch.cond, expected both "
                               f"to be tensors or both ints, got {type(a).__name__} and "
                               f"{type(b).__name__}")
        if isinstance(a, Tensor):
            if a.dim() != b.dim():
                raise RuntimeError("When merging two branches' output in torch.cond,  expected "
                                   f"same dim but got {a.dim()} and {b.dim()}.")
            if a.dtype != b.dtype:
                raise RuntimeError("When merging two branches' output in torch.cond,  expected "
                                   f"same dtype but got {a.dtype} and {b.dtype}.")


def cond(pred: Any, true_fn: Callable, false_fn: Callable,
         operands: Sequence[Any] = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``. A Python predicate just
    picks the branch; a one-element tensor predicate also gets torch's checks: callable
    branches, operands a tuple/list of (nested) tensors, and branch outputs that agree."""
    _check_pred(pred)
    if not isinstance(pred, Tensor):
        return (true_fn if pred else false_fn)(*operands)
    if not (callable(true_fn) and callable(false_fn)):
        raise RuntimeError("Expect both branches to be callable.")
    leaves, _ = _leaves(operands) if isinstance(operands, (tuple, list)) else ([None], None)
    if not all(isinstance(leaf, Tensor) for leaf in leaves):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    taken, other = (true_fn, false_fn) if bool(pred.item()) else (false_fn, true_fn)
    versions = _versions(leaves)
    result = taken(*operands)
    _check_outputs(_leaves(result)[0], leaves, versions, "torch.cond")
    with grad_mode.no_grad():
        copies = _copied(tuple(operands))
        other_result = other(*copies)
        _check_outputs(_leaves(other_result)[0], _leaves(copies)[0], [], "torch.cond")
        _merge_check(result, other_result)
    return _recorded(result, CondAutogradOp)


# -- while_loop ---------------------------------------------------------------------------------
def _describe(leaves: List[Any]) -> str:
    return "[" + ", ".join(f"{type(x).__name__}{tuple(x.shape) if isinstance(x, Tensor) else ''}"
                           for x in leaves) + "]"


def _check_carry(outputs: List[Any], carried: List[Any]) -> None:
    if len(outputs) != len(carried):
        raise RuntimeError("Expected body_fn_output and carried_inputs to have same number of "
                           f"outputs but got lhs:{_describe(outputs)} and "
                           f"rhs:{_describe(carried)}")
    for index, (out, given) in enumerate(zip(outputs, carried)):
        if isinstance(given, Tensor):
            differ = []
            if not isinstance(out, Tensor):
                differ.append(f"'type: {type(out).__name__} vs Tensor'")
            else:
                if out.shape != given.shape:
                    differ.append(f"'shape: {out.shape} vs {given.shape}'")
                if out.dtype != given.dtype:
                    differ.append(f"'dtype: {out.dtype} vs {given.dtype}'")
            if differ:
                raise RuntimeError("Expected body_fn_output and carried_inputs to have same "
                                   f"metadata but found:\npair[{index}] differ in "
                                   f"{', '.join(differ)}")
        elif not isinstance(out, int):
            raise RuntimeError("Expected body_fn_output and carried_inputs to have same "
                               f"metadata but found:\npair[{index}] differ in 'type: "
                               f"{type(out).__name__} vs int'")


def _keep_going(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.dim() == 0 and str(value.dtype) == "torch.bool":
        return bool(value.item())
    if isinstance(value, int):
        raise RuntimeError("torch.while_loop: infinite loop detected because cond_fn always "
                           f"returns the same value {value}")
    shape = value.shape if isinstance(value, Tensor) else type(value).__name__
    raise RuntimeError("torch.while_loop: Expected cond_fn to return a scalar tensor or a "
                       f"bool but got {shape}.")


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: Sequence[Any]) -> Any:
    """``body_fn`` applied to the carried values while ``cond_fn`` of them is true, returning
    the last values (in the nesting ``body_fn`` returns; fresh copies when the body never
    ran). Carried values are tensors and ints; each step must return the same number of them
    with the same shapes and dtypes, none aliasing its inputs."""
    if not (callable(cond_fn) and callable(body_fn)):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError("Expect carried_inputs to be a tuple or a list, but got "
                           f"{type(carried_inputs).__name__}.")
    carried, _ = _leaves(carried_inputs)
    if not all(isinstance(x, (Tensor, int)) for x in carried):
        kinds = ", ".join(str(type(x)) for x in carried)
        raise AssertionError(f"{carried} can only be of (Tensor, int) but got ({kinds})")
    if grad_mode.is_grad_enabled() and any(isinstance(x, Tensor) and x.requires_grad
                                           for x in carried) and \
            not all(isinstance(x, Tensor) for x in carried):
        kinds = [type(x).__name__ for x in carried]
        raise RuntimeError("torch.while_loop: to record gradients all carried_inputs must be "
                           f"tensors for stack_output, got {kinds}")
    values: Any = tuple(carried_inputs)
    result = None
    while _keep_going(cond_fn(*values)):
        inputs = _leaves(values)[0]
        versions = _versions(inputs)
        result = body_fn(*values)
        outputs = _leaves(result)[0]
        _check_carry(outputs, carried)
        _check_outputs(outputs, inputs, versions, "torch.while_loop")
        values = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if result is not None:
        return _recorded(result, WhileLoopAutogradOp)
    with grad_mode.no_grad():  # the body's nesting and checks, as torch's tracing gives them
        probe = body_fn(*_copied(values))
        _check_carry(_leaves(probe)[0], carried)
    copies = _copied(values, detach=False)
    result = type(probe)(copies) if isinstance(probe, (tuple, list)) else copies[0]
    return _recorded(result, WhileLoopAutogradOp)
