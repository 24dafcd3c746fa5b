"""Ops whose backward masks, signs or scales ``grad`` by a pattern (or is itself a
``*_backward`` op in torch), each as ``fn(lib, x, other)`` on float64 inputs: ``x`` (3 x 4,
values spread around the kinks at 0, +-0.5, +-1, 3 and 6) and ``other`` (3 x 4) for ops with
a second tensor operand. Used by the double-backward differential test."""
from __future__ import annotations


def F(lib):
    return lib.nn.functional


OPS = {
    # clamps, scalar and tensor bounds
    "clamp": lambda L, x, o: x.clamp(-0.5, 0.5),
    "clamp_min": lambda L, x, o: x.clamp_min(0.1),
    "clamp_max": lambda L, x, o: x.clamp_max(0.1),
    "clamp_min_only": lambda L, x, o: x.clamp(min=0.1),
    "clamp_tensor": lambda L, x, o: x.clamp(o - 1, o),
    "clamp_tensor_min": lambda L, x, o: x.clamp(min=o),
    "clamp_tensor_max": lambda L, x, o: x.clamp(max=o),
    "clamp_min_tensor": lambda L, x, o: x.clamp_min(o),
    "clamp_max_tensor": lambda L, x, o: x.clamp_max(o),
    "clamp_": lambda L, x, o: (x * 1).clamp_(-0.5, 0.5),
    "clamp_tensor_": lambda L, x, o: (x * 1).clamp_(min=o),
    # selection by a condition
    "where": lambda L, x, o: L.where(x > 0, x, o),
    "where_number": lambda L, x, o: L.where(x > 0, x, 0.0),
    "masked_fill": lambda L, x, o: x.masked_fill(x > 0.5, 0.0),
    "masked_fill_tensor": lambda L, x, o: x.masked_fill(x > 0.5, o.sum()),
    "masked_fill_": lambda L, x, o: (x * 1).masked_fill_(x < 0, 2.0),
    # signs
    "abs": lambda L, x, o: x.abs(),
    "sign": lambda L, x, o: x.sign() * x,
    "sgn": lambda L, x, o: x.sgn() * x,
    "copysign": lambda L, x, o: L.copysign(x, o),
    # piecewise activations
    "relu": lambda L, x, o: x.relu(),
    "relu6": lambda L, x, o: F(L).relu6(x * 4),
    "hardtanh": lambda L, x, o: F(L).hardtanh(x),
    "hardtanh_range": lambda L, x, o: F(L).hardtanh(x, -0.5, 0.5),
    "leaky_relu": lambda L, x, o: F(L).leaky_relu(x, 0.2),
    "leaky_relu_": lambda L, x, o: F(L).leaky_relu(x * 1, 0.2, inplace=True),
    "elu": lambda L, x, o: F(L).elu(x),
    "elu_alpha": lambda L, x, o: F(L).elu(x, 0.5),
    "elu_": lambda L, x, o: F(L).elu(x * 1, inplace=True),
    "selu": lambda L, x, o: F(L).selu(x),
    "celu": lambda L, x, o: F(L).celu(x, 0.7),
    "hardsigmoid": lambda L, x, o: F(L).hardsigmoid(x * 4),
    "hardswish": lambda L, x, o: F(L).hardswish(x * 4),
    "hardshrink": lambda L, x, o: F(L).hardshrink(x, 0.5),
    "softshrink": lambda L, x, o: F(L).softshrink(x, 0.5),
    "tanhshrink": lambda L, x, o: F(L).tanhshrink(x),
    "threshold": lambda L, x, o: F(L).threshold(x, 0.5, -1.0),
    # smooth activations torch writes with a *_backward op
    "silu": lambda L, x, o: F(L).silu(x),
    "gelu": lambda L, x, o: F(L).gelu(x),
    "gelu_tanh": lambda L, x, o: F(L).gelu(x, approximate="tanh"),
    "mish": lambda L, x, o: F(L).mish(x),
    "softplus": lambda L, x, o: F(L).softplus(x),
    "softplus_beta": lambda L, x, o: F(L).softplus(x * 4, beta=2.0, threshold=3.0),
    "logsigmoid": lambda L, x, o: F(L).logsigmoid(x),
    "sigmoid": lambda L, x, o: x.sigmoid(),
    "tanh": lambda L, x, o: x.tanh(),
    "softsign": lambda L, x, o: F(L).softsign(x),
    # max and min: reductions and elementwise
    "max_all": lambda L, x, o: x.max(),
    "max_dim": lambda L, x, o: x.max(1)[0],
    "min_dim_keepdim": lambda L, x, o: x.min(0, keepdim=True)[0],
    "amax": lambda L, x, o: x.amax(1),
    "amin_all": lambda L, x, o: x.amin(),
    "maximum": lambda L, x, o: L.maximum(x, o),
    "minimum": lambda L, x, o: L.minimum(x, o),
    "fmax": lambda L, x, o: L.fmax(x, o),
    "fmin": lambda L, x, o: L.fmin(x, o),
    "max_other": lambda L, x, o: x.max(o),
    "max_pool2d": lambda L, x, o: F(L).max_pool2d(x.reshape(1, 3, 4), 2, 1),
    "max_pool1d": lambda L, x, o: F(L).max_pool1d(x.reshape(1, 3, 4), 2, 2),
    "sort": lambda L, x, o: x.sort(1)[0],
    "topk": lambda L, x, o: x.topk(2, 1)[0],
    "cummax": lambda L, x, o: x.cummax(1)[0],
    "median": lambda L, x, o: x.median(1)[0],
    # dropout: its mask is drawn from the same generator stream in both libraries
    "dropout": lambda L, x, o: (L.manual_seed(0), F(L).dropout(x, 0.5))[1],
    "dropout_eval": lambda L, x, o: F(L).dropout(x, 0.5, training=False),
    # index ops: gradient routed by an index pattern
    "index_select": lambda L, x, o: x.index_select(1, L.tensor([3, 0, 3])),
    "gather": lambda L, x, o: x.gather(1, L.tensor([[0, 0], [1, 3], [2, 2]])),
    "getitem_list": lambda L, x, o: x[:, [2, 0, 2]],
    "getitem_mask": lambda L, x, o: x[x > 0],
    "index_put": lambda L, x, o: x.index_put((L.tensor([0, 2]),), o[0]),
    "scatter": lambda L, x, o: x.scatter(1, L.tensor([[0], [1], [3]]), o[:, :1]),
    "scatter_add": lambda L, x, o: x.scatter_add(1, L.tensor([[0], [1], [3]]), o[:, :1]),
    "index_add": lambda L, x, o: x.index_add(1, L.tensor([0, 2]), o[:, :2]),
    "take": lambda L, x, o: x.take(L.tensor([0, 5, 5])),
    "masked_select": lambda L, x, o: x.masked_select(x > 0),
    "nan_to_num": lambda L, x, o: x.nan_to_num(),
}
