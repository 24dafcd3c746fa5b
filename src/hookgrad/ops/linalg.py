"""Matrix products and vector norms (torch.einsum, composed from them, is in ``einsum.py``).

``matmul`` is composed from dot/mv/mm/bmm and views by the same case analysis torch uses (fold
the batch of the larger operand into an mm when that avoids copies or a large gradient, else
expand + reshape + bmm), so the graph and what pack hooks see match torch's.
"""
from __future__ import annotations

import types

import numpy as np

from .._grad_state import INFERENCE_SAVE_ERROR
from .. import _blas
from ..tensor import Tensor
from ..autograd import grad_mode
from ..autograd.grad_mode import is_grad_enabled
from .._dtype import scalar_type_name
from ._reduce_util import torch_type_name
from .norms import norm, vector_norm  # noqa: F401  (torch.norm; torch.linalg's)
from .views import UnsafeView
from ._base import HALF_TYPES, Op
from ._out import exact_dtype_error, resize_out, write_out

_CPP_NAME = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "bool": "bool"}


def _size(shape: tuple) -> str:
    return "x".join(str(s) for s in shape)


def _check_kind(array: np.ndarray, kernel: str) -> None:
    if array.dtype == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b; half precision accumulates in float32 as torch's CPU kernels do."""
    if a.dtype in HALF_TYPES:
        return _blas.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return _blas.matmul(a, b)


def _product_forward(ctx, self: np.ndarray, other: np.ndarray, kernel: str,
                     self_first: bool) -> np.ndarray:
    """The end of mm / bmm / mv / dot's forward: each operand's gradient needs the other one, so
    each is saved only if the other needs a gradient (in torch's order of saved names)."""
    _check_kind(self, kernel)
    need_self, need_other = ctx.needs_input_grad
    saved_self, saved_other = (self if need_other else None), (other if need_self else None)
    ctx.save_for_backward(*((saved_self, saved_other) if self_first
                            else (saved_other, saved_self)))
    return _product(self, other)


# -- mm, bmm, mv, dot ---------------------------------------------------------------------------
def _transposed(a: np.ndarray) -> bool:
    """Column-major by torch's test (row stride 1, column stride the row count), as ``w.t()``;
    size-1 dims pass it while row-major too, and torch computes such gradients transposed."""
    return a.ndim == 2 and a.strides[0] == a.itemsize and a.strides[1] == a.shape[0] * a.itemsize


def operand_geometry(first: np.ndarray, second: np.ndarray) -> tuple:
    """The two factors' shapes and byte strides, which a product's node keeps to show them
    as torch's does (``_saved_self_sym_sizes``, ``_saved_mat2_sym_strides``, ...)."""
    return first.shape, first.strides, second.shape, second.strides, first.itemsize


def shown_geometry(first: str, second: str) -> dict:
    """``saved_values`` entries for the factors' sizes and strides (in elements), worked out
    from ``ctx.geometry`` only when asked."""
    def strides(position: int):
        return lambda node: tuple(abs(s) // node.geometry[4] for s in node.geometry[position])
    return {f"{first}_sym_sizes": lambda node: node.geometry[0],
            f"{first}_sym_strides": strides(1),
            f"{second}_sym_sizes": lambda node: node.geometry[2],
            f"{second}_sym_strides": strides(3)}


def mm_grads(grad: Tensor, mat1, mat2, mat1_transposed: bool, mat2_transposed: bool):
    """``grad mat2^T`` and ``mat1^T grad`` (None where the saved factor is None), each produced
    in the layout of the input it belongs to, as torch does: for a transposed input (a Linear
    weight seen through ``.t()``) the product is computed transposed and viewed back, so that
    the gradient reaching the weight is C-ordered and accumulating it into ``.grad`` is a
    plain copy rather than a transposing one."""
    grad_mat1 = grad_mat2 = None
    if mat2 is not None:
        grad_mat1 = (mat2.mm(grad.t()).t() if mat1_transposed else grad.mm(mat2.t()))
    if mat1 is not None:
        grad_mat2 = (grad.t().mm(mat1).t() if mat2_transposed else mat1.t().mm(grad))
    return grad_mat1, grad_mat2


_PLAIN = (np.dtype(np.float32), np.dtype(np.float64))


def plain_product_grads(grad: Tensor, *factors) -> bool:
    """Whether the gradients of a product may be computed on arrays (``mm_grads_on_arrays``):
    no graph of them is wanted, and the incoming gradient and the saved factors are all of one
    float32/float64 dtype, so NumPy's products have torch's values and dtypes."""
    if grad_mode._state.enabled or type(grad) is not Tensor:
        return False
    dtype = grad._data.dtype
    if dtype not in _PLAIN:
        return False
    for factor in factors:
        if factor is not None and factor._data.dtype != dtype:
            return False
    return True


def mm_grads_on_arrays(grad: np.ndarray, mat1, mat2, mat1_transposed: bool,
                       mat2_transposed: bool):
    """``mm_grads`` on arrays (first-order backward, ``plain_product_grads``): the same products
    in the same layouts, one NumPy call each instead of a Tensor op per transpose and product."""
    grad_mat1 = grad_mat2 = None
    if mat2 is not None:
        mat2 = mat2._data
        grad_mat1 = Tensor._make(_product(mat2, grad.T).T if mat1_transposed
                                 else _product(grad, mat2.T))
    if mat1 is not None:
        mat1 = mat1._data
        grad_mat2 = Tensor._make(_product(grad.T, mat1).T if mat2_transposed
                                 else _product(mat1.T, grad))
    return grad_mat1, grad_mat2


class Mm(Op):
    """d(A B) = grad B^T, A^T grad"""

    node_name = "MmBackward0"
    saved_names = ("mat2", "self")
    saved_values = shown_geometry("self", "mat2")

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
        ctx.layouts = (_transposed(self), _transposed(mat2))
        ctx.geometry = operand_geometry(self, mat2)
        return _product_forward(ctx, self, mat2, "addmm_impl_cpu_", self_first=False)

    @staticmethod
    def backward(ctx, grad):
        mat2, self = ctx.saved_tensors
        if plain_product_grads(grad, self, mat2):
            return mm_grads_on_arrays(grad._data, self, mat2, *ctx.layouts)
        return mm_grads(grad, self, mat2, *ctx.layouts)


class Bmm(Op):
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
        return _product_forward(ctx, self, mat2, "bmm", self_first=False)

    @staticmethod
    def backward(ctx, grad):
        mat2, self = ctx.saved_tensors
        return (grad.bmm(mat2.transpose(1, 2)) if mat2 is not None else None,
                self.transpose(1, 2).bmm(grad) if self is not None else None)


class Mv(Op):
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
        return _product_forward(ctx, self, vec, "addmv_impl_cpu", self_first=True)

    @staticmethod
    def backward(ctx, grad):
        self, vec = ctx.saved_tensors
        return (grad.unsqueeze(1) * vec.unsqueeze(0) if vec is not None else None,
                self.t().mv(grad) if self is not None else None)


class Dot(Op):
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
        return np.asarray(_product_forward(ctx, self, tensor, "dot", self_first=True))

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
    """Matrix product of two 2-d tensors (no broadcasting)."""
    _tensor_args("mm", input, mat2)
    return Mm.apply(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of ``(b, n, m)`` and ``(b, m, p)`` tensors (no broadcasting)."""
    _tensor_args("bmm", input, mat2)
    return Bmm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product."""
    _tensor_args("mv", input, vec)
    return Mv.apply(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    """Inner product of two 1-d tensors."""
    _tensor_args("dot", input, other)
    return Dot.apply(input, other)


# -- matmul -------------------------------------------------------------------------------------
class _SqueezeFirst(Op):
    """torch's in-place ``squeeze_(0)`` on mm's fresh output (1D @ 2D): a new node, no view."""

    node_name = "SqueezeBackward4"

    @staticmethod
    def forward(ctx, self):
        return self[0]

    @staticmethod
    def backward(ctx, grad):
        return grad.unsqueeze(0)


def _matmul_out(out: Tensor, result: Tensor, input: Tensor, other: Tensor) -> Tensor:
    """``matmul(..., out=)``: the kernel torch's matmul picks refuses an out of another dtype,
    each with its own message, some (dot and the batched or folded forms) after resizing it;
    a matrix-vector product takes an out that broadcasts to its result as addmv's input."""
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        return write_out(out, result, "matmul")  # its autograd refusal
    dims = (input._data.ndim, other._data.ndim)
    if result._data.dtype != out._data.dtype:
        addmv = dims[1] == 1 and out._data.size and _broadcasts(out._data.shape,
                                                                 result._data.shape)
        if max(dims) > 2 or dims == (1, 1):
            resize_out(out, result._data.shape)
        names = [scalar_type_name(t._data.dtype) for t in (out, input, other)]
        if dims == (1, 1):
            raise RuntimeError(f"result dtype {names[0]} does not match input dtype {names[1]}")
        if addmv:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                               f"{names[0]}, {names[1]}, and {names[2]}")
        raise exact_dtype_error(result._data, out)
    if dims == (1, 2):  # computed as a 1-row mm, whose shape torch's warning names
        resize_out(out, (1,) + result._data.shape)
    return write_out(out, result, "matmul", warn_resize=dims != (1, 2))


def _broadcasts(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """torch.matmul: dot, mv, mm, a folded mm/mv or a broadcast bmm, by the operands' dims.
    Shape errors carry both original shapes (the sub-op sees folded ones)."""
    if out is not None:
        return _matmul_out(out, matmul(input, other), input, other)
    _tensor_args("matmul", input, other)
    dim1, dim2 = input._data.ndim, other._data.ndim
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{dim1}D and {dim2}D")
    try:
        return _matmul(input, other)
    except RuntimeError as error:
        if str(error) == INFERENCE_SAVE_ERROR:  # no shape error: torch's words as they are
            raise
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


# torch.linalg: the functions of this module that torch keeps there
namespace = types.ModuleType(
    "hookgrad.linalg", "torch.linalg: vector norms, products, determinants, inverses.")
namespace.vector_norm, namespace.matmul = vector_norm, matmul
