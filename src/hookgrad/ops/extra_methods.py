"""The Tensor methods of the sorting, structure, extra math, scan and in-place modules (torch's
method names), installed by ``_tensor_methods`` next to the core table."""
from __future__ import annotations

from ..tensor import Tensor
from . import activations as A
from . import binary_math as B
from . import diagonal as D
from . import extra_math as X
from . import inplace_unary as I
from . import masked as K
from . import random as R
from . import scans as C
from . import searching as Q
from . import sorting as S
from . import structure as T


def _inplace_binary(cls, name: str):
    def op(self, other):
        other = I.E.as_operand(other, name)
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return I.inplace(cls, self, other, I.E.promote(self, other), None)

    op.__name__ = op.__qualname__ = name
    return op


METHODS = {
    # sorting and searching
    "sort": S.sort, "argsort": S.argsort, "msort": S.msort, "topk": S.topk,
    "kthvalue": S.kthvalue, "median": S.median, "nanmedian": S.nanmedian, "mode": S.mode,
    "unique": Q.unique, "unique_consecutive": Q.unique_consecutive, "nonzero": Q.nonzero,
    "argwhere": Q.argwhere, "count_nonzero": Q.count_nonzero, "bincount": Q.bincount,
    # structure
    "tril": D.tril, "triu": D.triu, "tril_": D.tril_, "triu_": D.triu_, "diag": D.diag,
    "diagonal": D.diagonal, "diag_embed": D.diag_embed, "diagflat": D.diagflat,
    "trace": D.trace, "fill_diagonal_": D.fill_diagonal_, "outer": T.outer, "ger": T.ger,
    "kron": T.kron, "cross": T.cross, "tensor_split": T.tensor_split,
    "repeat_interleave": T.repeat_interleave, "tile": T.tile, "rot90": T.rot90,
    "broadcast_to": T.broadcast_to, "ravel": T.ravel, "take": T.take,
    # math
    "log2": X.log2, "log10": X.log10, "exp2": X.exp2, "expm1": X.expm1, "tan": X.tan,
    "asin": X.asin, "acos": X.acos, "atan": X.atan, "arcsin": X.asin, "arccos": X.acos,
    "arctan": X.atan, "sinh": X.sinh, "cosh": X.cosh, "asinh": X.asinh, "acosh": X.acosh,
    "atanh": X.atanh, "arcsinh": X.asinh, "arccosh": X.acosh, "arctanh": X.atanh,
    "sinc": X.sinc, "frac": X.frac, "deg2rad": X.deg2rad, "rad2deg": X.rad2deg,
    "logit": X.logit, "nan_to_num": X.nan_to_num, "positive": X.positive,
    "atan2": B.atan2, "arctan2": B.atan2, "hypot": B.hypot, "logaddexp": B.logaddexp,
    "copysign": B.copysign, "fmod": B.fmod, "xlogy": B.xlogy, "lerp": B.lerp,
    "addcmul": B.addcmul, "addcdiv": B.addcdiv, "hardshrink": A.hardshrink,
    # scans and fused reductions
    "cumprod": C.cumprod, "cummax": C.cummax, "cummin": C.cummin,
    "logcumsumexp": C.logcumsumexp, "diff": C.diff, "aminmax": C.aminmax, "nansum": C.nansum,
    "nanmean": C.nanmean,
    # masked and indexed updates
    "masked_select": K.masked_select, "masked_scatter": K.masked_scatter,
    "masked_scatter_": K.masked_scatter_, "index_fill": K.index_fill,
    "index_fill_": K.index_fill_,
    # in place
    **I.METHODS,
    **R.METHODS,
    "atan2_": _inplace_binary(B.Atan2, "atan2_"), "hypot_": _inplace_binary(B.Hypot, "hypot_"),
}
