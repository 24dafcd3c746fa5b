"""Matrix products, einsum and vector norms.

``matmul`` is composed from dot/mv/mm/bmm and views by the same case analysis torch uses (fold
the batch of the larger operand into an mm when that avoids copies or a large gradient, else
expand + reshape + bmm), so the graph and what pack hooks see match torch's.
"""
from __future__ import annotations

import math
import string
import types

import numpy as np

from ..tensor import Tensor
from .elementwise import _Op
from .reduce import _accumulator, _const, _restore, reduce_dims, torch_type_name
from .views import UnsafeView

_CPP_NAME = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
             "uint8": "unsigned char", "bool": "bool"}


def _size(shape: tuple) -> str:
    return "x".join(str(s) for s in shape)


def _check_kind(array: np.ndarray, kernel: str) -> None:
    if array.dtype == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b; half precision accumulates in float32 as torch's CPU kernels do."""
    if a.dtype == np.float16:
        return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    return np.matmul(a, b)


# -- mm, bmm, mv, dot ---------------------------------------------------------------------------
class Mm(_Op):
    """d(A B) = grad B^T, A^T grad"""

    node_name = "MmBackward0"
    saved_names = ("mat2", "self")

    @staticmethod
    def forward(ctx, self, mat2):
        if self.ndim != 2:
            raise RuntimeError("self must be a matrix")
        if mat2.ndim != 2:
            raise RuntimeError("mat2 must be a matrix")
        if self.shape[1] != mat2.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_size(self.shape)} "
                               f"and {_size(mat2.shape)})")
        if self.dtype != mat2.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_CPP_NAME[self.dtype.name]} != {_CPP_NAME[mat2.dtype.name]}")
        _check_kind(self, "addmm_impl_cpu_")
        need_self, need_mat2 = ctx.needs_input_grad
        ctx.save_for_backward(mat2 if need_self else None, self if need_mat2 else None)
        return _product(self, mat2)

    @staticmethod
    def backward(ctx, grad):
        mat2, self = ctx.saved_tensors
        return (grad.mm(mat2.t()) if mat2 is not None else None,
                self.t().mm(grad) if self is not None else None)


class Bmm(_Op):
    """batched mm: d(A B) = grad B^T, A^T grad per batch"""

    node_name = "BmmBackward0"
    saved_names = ("mat2", "self")

    @staticmethod
    def forward(ctx, self, mat2):
        if self.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor")
        if mat2.ndim != 3:
            raise RuntimeError("batch2 must be a 3D tensor")
        if mat2.shape[:2] != (self.shape[0], self.shape[2]):
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{self.shape[0]}, {self.shape[2]}] but got: "
                               f"[{mat2.shape[0]}, {mat2.shape[1]}].")
        if self.dtype != mat2.dtype:
            raise RuntimeError(f"expected scalar type {torch_type_name(self)} but found "
                               f"{torch_type_name(mat2)}")
        _check_kind(self, "bmm")
        need_self, need_mat2 = ctx.needs_input_grad
        ctx.save_for_backward(mat2 if need_self else None, self if need_mat2 else None)
        return _product(self, mat2)

    @staticmethod
    def backward(ctx, grad):
        mat2, self = ctx.saved_tensors
        return (grad.bmm(mat2.transpose(1, 2)) if mat2 is not None else None,
                self.transpose(1, 2).bmm(grad) if self is not None else None)


class Mv(_Op):
    """d(A v) = outer(grad, v), A^T grad"""

    node_name = "MvBackward0"
    saved_names = ("self", "vec")

    @staticmethod
    def forward(ctx, self, vec):
        if self.ndim != 2 or vec.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.ndim}, "
                               f"{vec.ndim}")
        if self.shape[1] != vec.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat "
                               f"({_size(self.shape)}), vec ({vec.shape[0]})")
        if self.dtype != vec.dtype:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                               f"{torch_type_name(vec)}, {torch_type_name(self)}, and "
                               f"{torch_type_name(vec)}")
        _check_kind(self, "addmv_impl_cpu")
        need_self, need_vec = ctx.needs_input_grad
        ctx.save_for_backward(self if need_vec else None, vec if need_self else None)
        return _product(self, vec)

    @staticmethod
    def backward(ctx, grad):
        self, vec = ctx.saved_tensors
        return (grad.unsqueeze(1) * vec.unsqueeze(0) if vec is not None else None,
                self.t().mv(grad) if self is not None else None)


class Dot(_Op):
    """d(a . b) = grad b, grad a"""

    node_name = "DotBackward0"
    saved_names = ("self", "tensor")

    @staticmethod
    def forward(ctx, self, tensor):
        if self.ndim != 1 or tensor.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D "
                               f"tensors")
        if self.shape != tensor.shape:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and "
                               f"src [{tensor.shape[0]}] to have the same number of elements, "
                               f"but got {self.shape[0]} and {tensor.shape[0]} elements "
                               f"respectively")
        if self.dtype != tensor.dtype:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{torch_type_name(self)} and {torch_type_name(tensor)}")
        _check_kind(self, "dot")
        need_self, need_tensor = ctx.needs_input_grad
        ctx.save_for_backward(self if need_tensor else None, tensor if need_self else None)
        return np.asarray(_product(self, tensor))

    @staticmethod
    def backward(ctx, grad):
        self, tensor = ctx.saved_tensors
        return (grad * tensor if tensor is not None else None,
                grad * self if self is not None else None)


def _tensor_args(op: str, input, other) -> None:
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    _tensor_args("mm", input, mat2)
    return Mm.apply(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    _tensor_args("bmm", input, mat2)
    return Bmm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    _tensor_args("mv", input, vec)
    return Mv.apply(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    _tensor_args("dot", input, other)
    return Dot.apply(input, other)


# -- matmul -------------------------------------------------------------------------------------
class _SqueezeFirst(_Op):
    """torch's in-place ``squeeze_(0)`` on mm's fresh output (1D @ 2D): a new node, no view."""

    node_name = "SqueezeBackward4"

    @staticmethod
    def forward(ctx, self):
        return self[0]

    @staticmethod
    def backward(ctx, grad):
        return grad.unsqueeze(0)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """torch.matmul: dot, mv, mm, a folded mm/mv or a broadcast bmm, by the operands' dims.
    Shape errors carry both original shapes (the sub-op sees folded ones)."""
    _tensor_args("matmul", input, other)
    dim1, dim2 = input._data.ndim, other._data.ndim
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{dim1}D and {dim2}D")
    try:
        return _matmul(input, other)
    except RuntimeError as error:
        raise RuntimeError(f"{error} (in matmul: shapes {list(input._data.shape)} and "
                           f"{list(other._data.shape)})") from None


def _matmul(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    dim1, dim2 = tensor1._data.ndim, tensor2._data.ndim
    if dim1 == 1 and dim2 == 1:
        return Dot.apply(tensor1, tensor2)
    if dim1 == 2 and dim2 == 1:
        return Mv.apply(tensor1, tensor2)
    if dim1 == 1 and dim2 == 2:
        return _SqueezeFirst.apply(Mm.apply(tensor1.unsqueeze(0), tensor2))
    if dim1 == 2 and dim2 == 2:
        return Mm.apply(tensor1, tensor2)
    if _should_fold(tensor1, tensor2):
        return _folded(tensor1, tensor2)
    return _batched(tensor1, tensor2)


def _should_fold(tensor1: Tensor, tensor2: Tensor) -> bool:
    """Fold the larger operand's batch into mm/mv rows when its leading dims merge without a
    copy, or when the smaller operand needs a gradient (bmm would make it batch-times larger)."""
    larger_first = tensor1._data.ndim >= tensor2._data.ndim
    big = tensor1 if larger_first else tensor2
    small = tensor2 if larger_first else tensor1
    if not (big._data.ndim >= 3 and small._data.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if tensor1._data.ndim == 2:
        return False
    if big._data.size == 0:
        return True
    shape, strides = list(big._data.shape), list(big.stride())
    if not larger_first:  # torch looks at tensor2.mT
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _folded(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    transpose = tensor2._data.ndim > tensor1._data.ndim
    if transpose:
        t1 = tensor2.mT
        t2 = tensor1.t() if tensor1._data.ndim == 2 else tensor1
    else:
        t1, t2 = tensor1, tensor2
    sizes = t1._data.shape
    output_shape = sizes[:-1]
    rows = int(np.prod(output_shape, dtype=np.int64))
    folded = t1.reshape(rows, sizes[-1])
    if t2._data.ndim == 2:
        output = UnsafeView.apply(mm(folded, t2), output_shape + (t2._data.shape[1],))
        return output.mT.contiguous() if transpose else output
    return UnsafeView.apply(mv(folded, t2), output_shape)


def _batched(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    shape1, shape2 = tensor1._data.shape, tensor2._data.shape
    dim1, dim2 = len(shape1), len(shape2)
    n = shape1[-2] if dim1 > 1 else 1
    m1 = shape1[-1]
    m2 = shape2[-2] if dim2 > 1 else shape2[0]
    p = shape2[-1] if dim2 > 1 else 1
    batch1, batch2 = shape1[:max(dim1 - 2, 0)], shape2[:max(dim2 - 2, 0)]
    if dim1 == 3 and dim2 == 3 and batch1[0] != batch2[0]:
        # a batch of one that needs a gradient is squeezed, so its gradient comes from an mm
        if batch1[0] == 1 and tensor1.requires_grad:
            return _matmul(tensor1.squeeze(0), tensor2)
        if batch2[0] == 1 and tensor2.requires_grad:
            return _matmul(tensor1, tensor2.squeeze(0))
    batch = _broadcast_batch(batch1, batch2)
    count = int(np.prod(batch, dtype=np.int64))
    expanded1 = tensor1.expand(batch + (n, m1)).reshape(count, n, m1)
    vector_rhs = dim2 == 1
    expanded2 = tensor2.expand(batch + ((m2,) if vector_rhs else (m2, p)))
    if vector_rhs:
        expanded2 = expanded2.reshape(count, m2).unsqueeze(2)
    else:
        expanded2 = expanded2.reshape(count, m2, p)
    output_shape = batch + ((n,) if dim1 > 1 else ()) + ((p,) if dim2 > 1 else ())
    product = bmm(expanded1, expanded2)
    if vector_rhs:
        product = product.squeeze(-1)
    return UnsafeView.apply(product, output_shape)


def _broadcast_batch(batch1: tuple, batch2: tuple) -> tuple:
    ndim = max(len(batch1), len(batch2))
    a = (1,) * (ndim - len(batch1)) + tuple(batch1)
    b = (1,) * (ndim - len(batch2)) + tuple(batch2)
    for dim in range(ndim - 1, -1, -1):
        if a[dim] != b[dim] and a[dim] != 1 and b[dim] != 1:
            raise RuntimeError(f"The size of tensor a ({a[dim]}) must match the size of tensor b "
                               f"({b[dim]}) at non-singleton dimension {dim}")
    return tuple(max(x, y) for x, y in zip(a, b))


# -- einsum -------------------------------------------------------------------------------------
_LETTERS = string.ascii_uppercase + string.ascii_lowercase


class Einsum(_Op):
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
        return np.asarray(result).astype(dtype, copy=False)

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


# -- vector norms -------------------------------------------------------------------------------
class LinalgVectorNorm(_Op):
    """||x||_ord over ``dim``; the gradient follows torch's case analysis on ``ord``"""

    node_name = "LinalgVectorNormBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, ord, dims, keepdim, dtype=None):
        if self.dtype.kind not in "fc":
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                               f"as input. Got {torch_type_name(self)}")
        if math.isinf(ord) and self.size == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                               f"tensor because the operation does not have an identity")
        ctx._saved_ord, ctx._saved_dim, ctx._saved_keepdim = ord, dims, keepdim
        out_dtype = dtype if dtype is not None else self.dtype
        x = np.abs(self.astype(_accumulator(out_dtype), copy=False))
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            if ord == 2:
                result = np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))
            elif ord == 1:
                result = np.sum(x, axis=dims, keepdims=keepdim)
            elif ord == math.inf:
                result = np.max(x, axis=dims, keepdims=keepdim)
            elif ord == -math.inf:
                result = np.min(x, axis=dims, keepdims=keepdim)
            elif ord == 0:
                result = np.sum(x != 0, axis=dims, keepdims=keepdim).astype(x.dtype)
            else:
                power = np.sum(x ** x.dtype.type(ord), axis=dims, keepdims=keepdim)
                result = power ** x.dtype.type(1.0 / ord)
        result = np.asarray(result).astype(out_dtype, copy=False)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        return _vector_norm_grad(ctx, grad), None, None, None, None


def _vector_norm_grad(ctx, grad: Tensor) -> Tensor:
    """torch's case analysis: sign for ord 1, x / norm for 2, shared ties for inf."""
    self, norm = ctx.saved_tensors
    ord, dims, keepdim = ctx._saved_ord, ctx._saved_dim, ctx._saved_keepdim
    shape = self._data.shape
    grad = _restore(grad, shape, dims, keepdim)
    norm = _restore(norm, shape, dims, keepdim)
    if ord == 0:
        return _const(np.zeros_like(self._data))
    if ord == 1:
        return self.sgn() * grad
    if ord == 2:
        return grad * (self / norm).masked_fill((norm == 0)._data, 0.0)
    if math.isinf(ord):
        size = np.abs(self._data)
        mask = (size == norm._data) | np.isnan(size)
        count = mask.sum(axis=dims, keepdims=True)
        return self.sgn() * ((grad / _const(count)) * _const(mask))
    if ord < 1:
        scaled = self.sgn() * self.abs().pow(ord - 1).masked_fill(self._data == 0, 0.0)
        return scaled * grad * norm.pow(1 - ord)
    scaled = self.sgn() * self.abs().pow(ord - 1) if ord < 2 else self * self.abs().pow(ord - 2)
    scale = (grad / norm.pow(ord - 1)).masked_fill((norm == 0)._data, 0.0)
    return scaled * scale


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """torch.linalg.vector_norm: (sum |x|^ord)^(1/ord) over ``dim`` (all dims by default)."""
    from .._dtype import to_numpy_dtype

    ord = float(ord)
    dims = reduce_dims(dim, x._data.ndim)
    np_dtype = None if dtype is None else to_numpy_dtype(dtype)
    if np_dtype is not None and x._data.dtype.kind == "f" and \
            np.promote_types(x._data.dtype, np_dtype) != np_dtype:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input "
                           f"({torch_type_name(x._data)}) should be convertible without "
                           f"narrowing to the specified dtype "
                           f"({torch_type_name(np.empty(0, np_dtype))})")
    return LinalgVectorNorm.apply(x, int(ord) if ord.is_integer() else ord, dims, keepdim,
                                  np_dtype)


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """torch.norm: 'fro' (over at most two dims) and numeric ``p`` are vector norms."""
    if isinstance(p, str):
        if p != "fro":
            raise RuntimeError(f"norm(): p='{p}' needs a matrix norm, which hookgrad does not "
                               f"implement; only 'fro' and numeric p are supported")
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(str(d) for d in dim)}")
        p = 2
    return vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)


# torch.linalg: the functions of this module that torch keeps there
namespace = types.ModuleType("hookgrad.linalg", "torch.linalg: vector norms and products.")
namespace.vector_norm, namespace.matmul = vector_norm, matmul
