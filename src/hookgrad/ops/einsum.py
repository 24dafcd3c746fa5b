"""einsum as torch computes it: not one node but a composition of views, sums, products and
bmm, so the graph, the saved tensors and the gradients are those torch records.

The steps, each recorded by the ordinary op:

1. Every label gets a place in one common order: the output's labels (an implicit output is the
   ``...`` dims, then the labels seen once, sorted), then the summed ones (``...`` dims left out
   of the output first, then the letters sorted, capitals before small letters).
2. Each operand takes the diagonal of a repeated label (``diagonal`` then ``movedim`` back to the
   first place the label had), gets a size-1 dim at its end for each label it lacks (in the
   common order), and is permuted into that order.
3. One operand: the summed places are summed away. Several: a summed label that only one operand
   has (size above 1) is summed in that operand first (``keepdim``); then the operands are
   combined left to right, each pair by a product when nothing is summed between them, else by
   one ``bmm`` over the labels summed there (no later operand has them): each side permuted to
   batch, own, summed dims and reshaped to three dims, the result viewed back and permuted into
   the common order. Last, a ``view`` drops the summed places, now of size 1.
"""
from __future__ import annotations

import string
from math import prod

from ..tensor import Tensor
from ._reduce_util import torch_type_name
from .diagonal import diagonal
from .linalg import bmm
from .reduce import sum as _sum
from .views import movedim, permute, unsqueeze

_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def einsum(*args) -> Tensor:
    """torch.einsum(equation, *operands): explicit or implicit output, ``...`` and size-1
    broadcasting; also the list form ``einsum(eq, [a, b])`` and the sublist form
    ``einsum(a, [0, 1], b, [1, 2])``."""
    equation, operands = (args[0], args[1:]) if args else (None, ())
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if equation is not None and not isinstance(equation, str):
        equation, operands = _from_sublists(args)
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    for i, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(f"einsum(): operand {i} must be a Tensor, not {type(op).__name__}")
    terms, output = _parse(equation, [op._data.shape for op in operands])
    first = operands[0]._data.dtype
    for op in operands[1:]:
        if op._data.dtype != first:
            raise RuntimeError(f"expected scalar type {torch_type_name(operands[0]._data)} but "
                               f"found {torch_type_name(op._data)}")
    order = output + _summed(terms, output)
    aligned = [_align(op, term, order) for op, term in zip(operands, terms)]
    summed = range(len(output), len(order))
    if len(aligned) == 1:
        return _sum(aligned[0], tuple(summed)) if summed else aligned[0]
    return _contract(aligned, summed, len(output))


def _summed(terms: list, output: list) -> list:
    """The labels summed over, in torch's order: ``...`` dims, then letters as sorted."""
    seen = {label for term in terms for label in term} - set(output)
    dots = sorted(label for label in seen if isinstance(label, int))
    return dots + sorted(label for label in seen if isinstance(label, str))


def _align(operand: Tensor, term: list, order: list) -> Tensor:
    """The operand with one dim per label of ``order``, in that order (size 1 where it has
    none): diagonals of repeated labels, size-1 dims appended for the missing, one permute."""
    labels: list = []
    for label in term:
        if label in labels:  # the diagonal goes back where the label first stood
            first = labels.index(label)
            operand = movedim(diagonal(operand, 0, first, len(labels)), -1, first)
        else:
            labels.append(label)
    for label in order:
        if label not in labels:
            operand = unsqueeze(operand, operand.ndim)
            labels.append(label)
    return permute(operand, tuple(labels.index(label) for label in order))


def _contract(operands: list, summed: range, out_dims: int) -> Tensor:
    """Several aligned operands combined left to right (see the module's docstring)."""
    def has(op, dim):
        return op.shape[dim] != 1

    operands = list(operands)
    for i, op in enumerate(operands):  # summed labels no other operand has
        alone = tuple(d for d in summed if has(op, d) and
                      not any(has(other, d) for j, other in enumerate(operands) if j != i))
        if alone:
            operands[i] = _sum(op, alone, keepdim=True)
    result = operands[0]
    for k in range(1, len(operands)):
        other = operands[k]
        dims = [d for d in summed if has(result, d) and has(other, d)
                and not any(has(later, d) for later in operands[k + 1:])]
        result = _sum_of_products(result, other, dims) if dims else result * other
    if len(summed):
        result = result.view(result.shape[:out_dims])
    return result


def _sum_of_products(left: Tensor, right: Tensor, summed: list) -> Tensor:
    """``(left * right).sum(summed, keepdim=True)`` through one bmm: dims both sides have are
    the batch, the rest each side's own rows or columns (a dim of size 1 on both sides goes with
    the right side's). torch puts the right operand first when all its own dims come before
    all of the left's, so the product lands in the output's order."""
    both, left_only, right_only = [], [], []
    for d in range(left.ndim):
        if d in summed:
            continue
        if left.shape[d] != 1 and right.shape[d] != 1:
            both.append(d)
        elif left.shape[d] != 1:
            left_only.append(d)
        else:
            right_only.append(d)
    if left_only and right_only and right_only[-1] < left_only[0]:
        left, right, left_only, right_only = right, left, right_only, left_only
    sizes = ([left.shape[d] for d in both + left_only] + [1] * len(summed)
             + [right.shape[d] for d in right_only])
    batch = prod(left.shape[d] for d in both)
    rows = prod(left.shape[d] for d in left_only)
    inner = prod(left.shape[d] for d in summed)
    columns = prod(right.shape[d] for d in right_only)
    left = permute(left, tuple(both + left_only + summed + right_only))
    right = permute(right, tuple(both + summed + right_only + left_only))
    product = bmm(left.reshape(batch, rows, inner), right.reshape(batch, inner, columns))
    placed = both + left_only + summed + right_only
    return permute(product.view(sizes), tuple(placed.index(d) for d in range(len(placed))))


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


def _parse(equation: str, shapes: list) -> tuple:
    """Each operand's labels (letters, and ``...`` dims as numbers counted over the longest
    ``...``, so shorter ones line up on the right) and the output's, checked in torch's order
    with torch's messages."""
    lhs, arrow, rhs = equation.partition("->")
    written = _read_terms(lhs, 0, len(shapes))
    dots = 0
    for i, ((letters, has_dots), shape) in enumerate(zip(written, shapes)):
        if has_dots is False:
            if len(letters) != len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(letters)}) does not match the number of dimensions "
                                   f"({len(shape)}) for operand {i} and no ellipsis was given")
            continue
        if len(letters) > len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(letters)}) is more than the number of dimensions "
                               f"({len(shape)}) for operand {i}")
        dots = max(dots, len(shape) - len(letters))
    terms = [_with_dots(letters, at, dots, len(shape) - len(letters))
             for (letters, at), shape in zip(written, shapes)]
    seen = [label for letters, _ in written for label in letters]
    if arrow:
        ((letters, at),) = _read_terms(rhs, len(lhs) + 2, None)
        for letter in letters:
            if letters.count(letter) > 1:
                raise RuntimeError(f"einsum(): output subscript {letter} appears more than once "
                                   f"in the output")
            if letter not in seen:
                raise RuntimeError(f"einsum(): output subscript {letter} does not appear in the "
                                   f"equation for any input operand")
        output = _with_dots(letters, at, dots, dots)
    else:
        output = list(range(dots)) + sorted(c for c in set(seen) if seen.count(c) == 1)
    _check_sizes(terms, shapes)
    return terms, output


def _with_dots(letters: list, at, dots: int, own: int) -> list:
    """The labels of a term whose ``...`` (at position ``at``, or False) covers its last
    ``own`` of the ``dots`` ellipsis dims."""
    if at is False:
        return list(letters)
    return letters[:at] + list(range(dots - own, dots)) + letters[at:]


def _read_terms(text: str, start: int, operands) -> list:
    """The comma-separated terms of one side of the equation, each as (letters, where its
    ``...`` stands or False); ``operands`` is how many the left side may have (None: the
    output, one term). ``start`` is where ``text`` begins in the equation."""
    terms = [([], False)]
    position = 0
    while position < len(text):
        char = text[position]
        letters, at = terms[-1]
        if char == "," and operands is not None:
            if len(terms) >= operands:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            terms.append(([], False))
        elif char == ".":
            whose = f"operand {len(terms) - 1}" if operands is not None else "output"
            if at is not False:
                raise RuntimeError(f"einsum(): found '.' for {whose} " + (
                    "for which an ellipsis was already found" if operands is not None
                    else "but an ellipsis (...) was already found"))
            if text[position:position + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for {whose} that is not part of any "
                                   "ellipsis" + (" (...)" if operands is None else ""))
            terms[-1] = (letters, len(letters))
            position += 2
        elif char in _LETTERS:
            letters.append(char)
        elif char != " ":
            raise RuntimeError(f"einsum(): invalid subscript given at index {start + position} "
                               "in the equation string, subscripts must be in [a-zA-Z]")
        position += 1
    if operands is not None and len(terms) < operands:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return terms


def _check_sizes(terms: list, shapes: list) -> None:
    """A label repeated in one operand has one size; across operands sizes agree or are 1."""
    sizes: dict = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        own: dict = {}
        for dim, (label, size) in enumerate(zip(term, shape)):
            if label in own and own[label] != size:
                raise RuntimeError(f"einsum(): subscript {label} is repeated for operand {i} but "
                                   f"the sizes don't match, {size} != {own[label]}")
            own[label] = size
            seen = sizes.get(label, 1)
            if size != 1 and seen != 1 and size != seen:
                if isinstance(label, int):
                    raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand "
                                       f"{i}has size {size} which does not broadcast with "
                                       f"previously seen ellipsis with size {seen} for the "
                                       f"respective dimension")
                raise RuntimeError(f"einsum(): subscript {label} has size {size} for operand "
                                   f"{i} which does not broadcast with previously seen size "
                                   f"{seen}")
            sizes[label] = max(seen, size)
