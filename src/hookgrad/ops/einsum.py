"""einsum: any equation NumPy accepts (``...``, implicit output, size-1 broadcasting), rewritten
to an explicit equation first, so one op covers every case and its gradient is again an einsum.
"""
from __future__ import annotations

import string

import numpy as np

from ..tensor import Tensor
from ._reduce_util import _accumulator, _const, torch_type_name
from . import _layout
from ._base import Op

_LETTERS = string.ascii_uppercase + string.ascii_lowercase


class Einsum(Op):
    """einsum on an explicit equation (no ellipsis, no broadcasting): the gradient of an operand
    is the einsum of the output gradient with the other operands, written to its subscripts."""

    node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, equation, *operands):
        needs = ctx.needs_input_grad[1:]
        ctx.equation = equation
        ctx.sizes = _letter_sizes(equation, [op.shape for op in operands])
        ctx.save_for_backward(*[op if any(n for k, n in enumerate(needs) if k != j) else None
                                for j, op in enumerate(operands)])
        dtype = operands[0].dtype
        work = [op.astype(_accumulator(dtype), copy=False) for op in operands]
        result = np.einsum(equation, *work, optimize=len(operands) > 1)
        if len(operands) == 1 and dtype.kind in "biu" and _summed_letters(equation):
            dtype = np.dtype(np.int64)  # a one-operand contraction is a sum in torch
        result = np.asarray(result).astype(dtype, copy=False)
        if len(operands) > 1 and _summed_letters(equation):
            result = _layout.contiguous(result)  # torch contracts by bmm into a fresh result
        return result

    @staticmethod
    def backward(ctx, grad):
        inputs, output = ctx.equation.split("->")
        terms = inputs.split(",")
        saved = ctx.saved_tensors
        grads = [None]
        for k, subscripts in enumerate(terms):
            if not ctx.needs_input_grad[k + 1]:
                grads.append(None)
                continue
            grads.append(_einsum_operand_grad(grad, output, terms, saved, k, ctx.sizes))
        return tuple(grads)


def _letter_sizes(equation: str, shapes: list) -> dict:
    sizes = {}
    for subscripts, shape in zip(equation.split("->")[0].split(","), shapes):
        sizes.update(zip(subscripts, shape))
    return sizes


def _summed_letters(equation: str) -> set:
    inputs, output = equation.split("->")
    return set(inputs.replace(",", "")) - set(output)


def _einsum_operand_grad(grad: Tensor, output: str, terms: list, saved: tuple, k: int,
                         sizes: dict) -> Tensor:
    """The gradient of operand ``k``: letters it alone sums get a ones operand, a repeated
    letter (a diagonal) writes through an identity matrix to a fresh letter."""
    available = set(output).union(*[set(t) for j, t in enumerate(terms) if j != k])
    subscripts = [output] + [t for j, t in enumerate(terms) if j != k]
    tensors = [grad] + [saved[j] for j in range(len(terms)) if j != k]
    dtype = grad._data.dtype
    fresh = iter(c for c in _LETTERS if c not in set("".join(terms) + output))
    target = []
    for letter in terms[k]:
        if letter in target:
            twin = next(fresh)
            subscripts.append(letter + twin)
            tensors.append(_const(np.eye(sizes[letter], dtype=dtype)))
            target.append(twin)
            continue
        if letter not in available:
            subscripts.append(letter)
            tensors.append(_const(np.ones(sizes[letter], dtype=dtype)))
            available.add(letter)
        target.append(letter)
    return Einsum.apply(",".join(subscripts) + "->" + "".join(target), *tensors)


def einsum(equation, *operands) -> Tensor:
    """torch.einsum: any equation numpy accepts, with ``...`` and size-1 broadcasting; also the
    list form ``einsum(eq, [a, b])`` and the sublist form ``einsum(a, [0, 1], b, [1, 2])``."""
    if not isinstance(equation, str):
        equation, operands = _from_sublists((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(f"einsum(): operand {i} must be a Tensor, not {type(op).__name__}")
    explicit = _explicit_equation(equation, [op._data.shape for op in operands])
    first = operands[0]._data.dtype
    for op in operands[1:]:
        if op._data.dtype != first:
            raise RuntimeError(f"expected scalar type {torch_type_name(operands[0]._data)} but "
                               f"found {torch_type_name(op._data)}")
    return Einsum.apply(explicit, *operands)


def _from_sublists(args: tuple):
    """(a, [0, 1], b, [1, 2], [0, 2]) -> ("AB,BC->AC", (a, b)); ints 0-51 name letters."""
    output = args[-1] if len(args) % 2 else None
    pairs = args[:-1] if output is not None else args

    def letters(sublist) -> str:
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sublist)

    equation = ",".join(letters(t) for t in pairs[1::2])
    if output is not None:
        equation += "->" + letters(output)
    return equation, tuple(pairs[0::2])


def _explicit_equation(equation: str, shapes: list) -> str:
    """Rewrite an equation without ``...``, implicit output or size-1 broadcasting: ellipsis
    dims get letters of their own, and a size-1 dim that broadcasts gets a private letter."""
    equation = equation.replace(" ", "")
    for index, char in enumerate(equation):
        if not (char in _LETTERS or char in ",.->"):
            raise RuntimeError(f"einsum(): invalid subscript given at index {index} in the "
                               f"equation string, subscripts must be in [a-zA-Z]")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    ellipsis_dims = 0
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        named = len(term.replace("...", ""))
        if "..." not in term and named != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) "
                               f"does not match the number of dimensions ({len(shape)}) for "
                               f"operand {i} and no ellipsis was given")
        if "..." in term:
            if named > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({named}) is more than the number of dimensions "
                                   f"({len(shape)}) for operand {i}")
            ellipsis_dims = max(ellipsis_dims, len(shape) - named)
    used = set(equation)
    pool = iter(c for c in _LETTERS if c not in used)
    try:
        ellipsis = "".join(next(pool) for _ in range(ellipsis_dims))
    except StopIteration:
        raise RuntimeError("einsum(): the equation needs more than 52 subscripts") from None
    expanded = [t.replace("...", ellipsis[len(ellipsis) - (len(s) - len(t.replace("...", ""))):])
                for t, s in zip(terms, shapes)]
    if arrow:
        output = rhs.replace("...", ellipsis)
        for letter in output:
            if output.count(letter) > 1:
                raise RuntimeError(f"einsum(): output subscript {letter} appears more than once "
                                   f"in the output")
            if letter not in "".join(expanded):
                raise RuntimeError(f"einsum(): output subscript {letter} does not appear in the "
                                   f"equation for any input operand")
    else:
        counts = lhs.replace("...", "")
        output = ellipsis + "".join(sorted(c for c in set(counts) if c != ","
                                           and counts.count(c) == 1))
    sizes = _broadcast_sizes(expanded, shapes)
    final = []
    for i, (term, shape) in enumerate(zip(expanded, shapes)):
        private = {}
        letters = []
        for letter, size in zip(term, shape):
            if size == 1 and sizes[letter] != 1:  # broadcasts: sum it alone over its one entry
                if letter not in private:
                    private[letter] = next(pool, None)
                    if private[letter] is None:
                        raise RuntimeError("einsum(): the equation needs more than 52 "
                                           "subscripts")
                letter = private[letter]
            letters.append(letter)
        final.append("".join(letters))
    return ",".join(final) + "->" + output


def _broadcast_sizes(terms: list, shapes: list) -> dict:
    sizes = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        own = {}
        for letter, size in zip(term, shape):
            if letter in own and own[letter] != size:
                raise RuntimeError(f"einsum(): subscript {letter} is repeated for operand {i} but "
                                   f"the sizes don't match, {size} != {own[letter]}")
            own[letter] = size
        for letter, size in own.items():
            seen = sizes.get(letter, 1)
            if size != 1 and seen != 1 and size != seen:
                raise RuntimeError(f"einsum(): subscript {letter} has size {size} for operand "
                                   f"{i} which does not broadcast with previously seen size "
                                   f"{seen}")
            sizes[letter] = max(seen, size) if letter in sizes else size
    return sizes
