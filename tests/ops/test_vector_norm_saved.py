"""linalg.vector_norm, torch.norm and Tensor.norm against torch: the node's saved attributes
(``_saved_ord`` with its Python type, ``_saved_dim`` as given, None when not, negative dims as
torch's unsigned read-back, ``_saved_keepdim``, the saved tensors), values and gradients."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

INF = float("inf")

CASES = {
    "default": lambda lib, x: lib.linalg.vector_norm(x),
    "ord_int": lambda lib, x: lib.linalg.vector_norm(x, 1),
    "ord_float_whole": lambda lib, x: lib.linalg.vector_norm(x, 2.0),
    "ord_float": lambda lib, x: lib.linalg.vector_norm(x, 3.5),
    "ord_negative": lambda lib, x: lib.linalg.vector_norm(x, -1),
    "ord_inf": lambda lib, x: lib.linalg.vector_norm(x, INF),
    "ord_bool": lambda lib, x: lib.linalg.vector_norm(x, True),
    "dim_int": lambda lib, x: lib.linalg.vector_norm(x, dim=0),
    "dim_negative": lambda lib, x: lib.linalg.vector_norm(x, dim=-1),
    "dim_list": lambda lib, x: lib.linalg.vector_norm(x, dim=[0, 2]),
    "dim_mixed_keepdim": lambda lib, x: lib.linalg.vector_norm(x, 3, dim=(-1, 0), keepdim=True),
    "dim_empty": lambda lib, x: lib.linalg.vector_norm(x, dim=()),
    "dtype": lambda lib, x: lib.linalg.vector_norm(x.float(), dtype=lib.float64),
    "norm": lambda lib, x: lib.norm(x),
    "norm_p_int": lambda lib, x: lib.norm(x, 3),
    "norm_p_float": lambda lib, x: lib.norm(x, 2.0),
    "norm_p_none": lambda lib, x: lib.norm(x, None, dim=1),
    "norm_fro": lambda lib, x: lib.norm(x, "fro"),
    "norm_fro_dims": lambda lib, x: lib.norm(x, "fro", dim=(0, -1)),
    "norm_dim_empty": lambda lib, x: lib.norm(x, dim=[]),
    "norm_inf_dim": lambda lib, x: lib.norm(x, INF, dim=0),
    "norm_keepdim": lambda lib, x: lib.norm(x, 1, dim=-2, keepdim=True),
    "norm_dtype": lambda lib, x: lib.norm(x.float(), dtype=lib.float64),
    "method": lambda lib, x: x.norm(),
    "method_p": lambda lib, x: x.norm(1),
    "method_p_none": lambda lib, x: x.norm(None),
    "method_p_dim": lambda lib, x: x.norm(3, 1),
    "method_fro": lambda lib, x: x.norm("fro"),
    "method_dim_keepdim": lambda lib, x: x.norm(dim=-1, keepdim=True),
}


def norm_node(out):
    """The norm's node (under the dtype cast's node for dtype=, it is the output's)."""
    return out.grad_fn


def saved(node):
    kept = {}
    for name in ("_saved_ord", "_saved_dim", "_saved_keepdim"):
        value = getattr(node, name)
        kept[name] = (type(value).__name__, value)
    return kept


@pytest.mark.parametrize("case", list(CASES))
def test_vector_norm_node_keeps_torchs_saved_attributes(rng, case):
    x_array = rng.standard_normal((2, 3, 4))
    results = []
    for lib in (hookgrad, torch):
        x = lib.tensor(x_array, requires_grad=True)
        out = CASES[case](lib, x)
        node = norm_node(out)
        kept = saved(node)
        self_saved, result_saved = node._saved_self, node._saved_result
        out.backward(lib.ones_like(out) * 0.5)
        results.append((node.name(), kept, out, self_saved, result_saved, x.grad))
    (h_name, h_kept, h_out, h_self, h_result, h_grad), (t_name, t_kept, t_out, t_self,
                                                        t_result, t_grad) = results
    assert h_name == t_name
    assert h_kept == t_kept
    assert_close(h_out, t_out, rtol=1e-10, atol=1e-12)
    assert_close(h_self, t_self, rtol=0, atol=0)
    assert_close(h_result, t_result, rtol=1e-10, atol=1e-12)
    # through x.float() the gradient is float32's (one rounding apart from torch's at most)
    assert_close(h_grad, t_grad, rtol=1e-6 if "dtype" in case else 1e-9, atol=1e-11)


@pytest.mark.parametrize("ord", [np.float64(2.0), np.int64(3)], ids=["np_float", "np_int"])
def test_numpy_number_ord_is_kept_as_its_python_kind(rng, ord):
    x_array = rng.standard_normal((3, 2))
    kept = []
    for lib in (hookgrad, torch):
        x = lib.tensor(x_array, requires_grad=True)
        kept.append(saved(lib.linalg.vector_norm(x, ord).grad_fn))
    assert kept[0] == kept[1]


OTHER_NODES = {
    "dist": lambda lib, x: lib.dist(x, x.detach() * 2),
    "dist_p_float": lambda lib, x: lib.dist(x, x.detach() * 2, 3.0),
    "dist_p_int": lambda lib, x: lib.dist(x, x.detach() * 2, 1),
    "dist_p_inf": lambda lib, x: lib.dist(x, x.detach() * 2, INF),
    "renorm": lambda lib, x: lib.renorm(x, 2, 0, 1.0),
    "renorm_negative_dim": lambda lib, x: lib.renorm(x, 1.5, -1, 1),
    "renorm_method": lambda lib, x: x.renorm(3, 1, 0.5),
    "pairwise_distance": lambda lib, x: lib.nn.functional.pairwise_distance(x, x.detach() * 2),
}


@pytest.mark.parametrize("case", list(OTHER_NODES))
def test_dist_and_renorm_nodes_keep_torchs_numbers(rng, case):
    """DistBackward0 keeps ``_saved_p``, RenormBackward0 ``_saved_p``/``_saved_dim``/
    ``_saved_maxnorm``, as given (and NormBackward1 of pairwise distance its own)."""
    x_array = rng.standard_normal((3, 4))
    results = []
    for lib in (hookgrad, torch):
        x = lib.tensor(x_array, requires_grad=True)
        out = OTHER_NODES[case](lib, x)
        node = out.grad_fn
        kept = {}
        for name in ("_saved_p", "_saved_dim", "_saved_maxnorm", "_saved_keepdim"):
            if hasattr(node, name):
                value = getattr(node, name)
                kept[name] = (type(value).__name__, value)
        out.sum().backward()
        results.append((node.name(), kept, out, x.grad))
    assert results[0][:2] == results[1][:2]
    assert results[1][1]  # torch keeps numbers on every node here
    assert_close(results[0][2], results[1][2], rtol=1e-10, atol=1e-12)
    assert_close(results[0][3], results[1][3], rtol=1e-9, atol=1e-11)
