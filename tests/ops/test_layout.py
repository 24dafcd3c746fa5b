"""Results have torch's memory layout: is_contiguous(), stride() and so which views are legal.

Every call in ``_layout_table.CALLS`` (every Tensor method, and the functions around them) runs
on four inputs of one shape (contiguous, transposed, sliced with a step, expanded) in hookgrad
and in torch, and the layouts of all tensor results must agree; an input torch refuses (an
in-place op on an expanded tensor) must be refused too.
"""
import numpy as np
import pytest
import torch
from _layout_table import CALLS, NN_CALLS, NOT_SWEPT

import hookgrad
import hookgrad._tensor_methods as methods

LAYOUTS = ("contiguous", "transposed", "sliced", "expanded")


def _input(lib, layout):
    if layout == "contiguous":
        return (lib.arange(12.) + 1).div(13).reshape(3, 4)
    if layout == "transposed":
        return (lib.arange(12.) + 1).div(13).reshape(4, 3).t()
    if layout == "sliced":
        return (lib.arange(40.) + 1).div(41).reshape(5, 8)[1:4, ::2]
    return (lib.arange(4.) + 1).div(5).reshape(1, 4).expand(3, 4)


def _layouts(result, kind):
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    return [(item.is_contiguous(), item.stride()) for item in items if isinstance(item, kind)]


def _run(fn, lib, layout):
    try:
        return fn(lib, _input(lib, layout)), None
    except Exception as error:  # noqa: BLE001 - compared with torch's below
        return None, error


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_result_layout_matches_torch(name, layout):
    theirs, their_error = _run(CALLS[name], torch, layout)
    ours, our_error = _run(CALLS[name], hookgrad, layout)
    if their_error is not None:
        assert our_error is not None, f"torch raised {their_error!r}"
        assert isinstance(our_error, type(their_error)), (our_error, their_error)
        return
    assert our_error is None, our_error
    expected = _layouts(theirs, torch.Tensor)
    assert expected, "the call returns no tensor"
    assert _layouts(ours, hookgrad.Tensor) == expected


NN_LAYOUTS = ("contiguous", "channels_last", "transposed", "expanded")


def _input_4d(lib, layout):
    base = (lib.arange(120.) + 1).div(121)
    if layout == "contiguous":
        return base.reshape(2, 3, 4, 5)
    if layout == "channels_last":
        return base.reshape(2, 4, 5, 3).permute(0, 3, 1, 2)
    if layout == "transposed":
        return base.reshape(2, 3, 5, 4).transpose(2, 3)
    return base.reshape(2, 3, 4, 5)[..., :1].expand(2, 3, 4, 5)


@pytest.mark.parametrize("layout", NN_LAYOUTS)
@pytest.mark.parametrize("name", sorted(NN_CALLS))
def test_nn_result_layout_matches_torch(name, layout):
    theirs = NN_CALLS[name](torch, _input_4d(torch, layout))
    ours = NN_CALLS[name](hookgrad, _input_4d(hookgrad, layout))
    assert _layouts(ours, hookgrad.Tensor) == _layouts(theirs, torch.Tensor)


def test_every_tensor_method_is_swept():
    names = set(methods.METHODS) | set(methods.MORE_METHODS)
    assert sorted(n for n in names if n not in CALLS and n not in NOT_SWEPT) == []


# layouts beyond one 2-d shape: torch's elementwise rule picks the order of the first operand
# that tells two dims apart, keeps a dense input's own strides (size-1 dims too), and
# otherwise orders dims by stride
MORE = {
    "permuted_exp": lambda L: L.arange(24.).reshape(2, 3, 4).permute(2, 0, 1).exp(),
    "permuted_plus_contiguous": lambda L: (L.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)
                                           + L.arange(24.).reshape(4, 2, 3)),
    "contiguous_plus_permuted": lambda L: (L.arange(24.).reshape(4, 2, 3)
                                           + L.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)),
    "size1_dim_strides_kept": lambda L: L.arange(12.).reshape(3, 1, 4).permute(2, 1, 0).exp(),
    "size1_dim_plus_number": lambda L: L.arange(12.).reshape(3, 1, 4).permute(2, 1, 0) + 1,
    "column_expanded_exp": lambda L: L.arange(3.).reshape(3, 1).expand(3, 4).exp(),
    "column_expanded_plus_transposed": lambda L: (L.arange(3.).reshape(3, 1).expand(3, 4)
                                                  + L.arange(12.).reshape(4, 3).t()),
    "permuted_clone": lambda L: L.arange(24.).reshape(2, 3, 4).permute(1, 2, 0).clone(),
    "permuted_cast": lambda L: L.arange(24.).reshape(2, 3, 4).permute(1, 2, 0).float(),
    "permuted_sort": lambda L: L.arange(24.).reshape(2, 3, 4).permute(1, 2, 0).sort(0)[0],
    "permuted_softmax": lambda L: L.arange(24.).reshape(2, 3, 4).permute(1, 2, 0).softmax(1),
    "permuted_sum_keepdim": lambda L: L.arange(24.).reshape(2, 3, 4).permute(1, 2, 0).sum(
        1, keepdim=True),
    "permuted_zeros_like": lambda L: L.zeros_like(L.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)),
    "rot90_k": lambda L: [L.arange(12.).reshape(4, 3).t().rot90(k) for k in range(-1, 5)],
    "rot90_dims": lambda L: L.arange(24.).reshape(2, 3, 4).rot90(1, (2, 0)),
    "einsum_contraction": lambda L: L.einsum("bij,bjk->bik", L.ones(2, 3, 4), L.ones(2, 4, 5)),
    "einsum_outer_transposed": lambda L: L.einsum("ij,ij->ji", L.ones(3, 4), L.ones(3, 4)),
    "unsqueeze_middle_transposed": lambda L: L.arange(12.).reshape(4, 3).t().unsqueeze(1),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_layouts_match_torch(name):
    theirs, ours = MORE[name](torch), MORE[name](hookgrad)
    assert _layouts(ours, hookgrad.Tensor) == _layouts(theirs, torch.Tensor)


def test_view_of_advanced_index_result():
    def run(lib):
        return lib.arange(6.).reshape(2, 3)[:, [2, 0]].view(-1)

    assert run(hookgrad).tolist() == run(torch).tolist()


def test_view_of_advanced_index_result_keeps_gradient():
    def run(lib):
        x = lib.arange(6., requires_grad=True)
        (x.reshape(2, 3)[:, [2, 0]].view(-1) * lib.arange(4.)).sum().backward()
        return x.grad.tolist()

    assert run(hookgrad) == run(torch)


def test_relaid_results_keep_values():
    """A result copied into torch's layout holds the same values as NumPy's answer."""
    base = np.arange(24.).reshape(2, 3, 4)
    ours = hookgrad.tensor(base).permute(2, 0, 1) + hookgrad.tensor(base.transpose(2, 0, 1).copy())
    theirs = torch.tensor(base).permute(2, 0, 1) + torch.tensor(base.transpose(2, 0, 1).copy())
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_unsqueeze_restrided_is_still_a_view():
    x = hookgrad.arange(12.).reshape(4, 3).t()
    y = x.unsqueeze(-1)
    y[1, 2, 0] = 100.0
    assert x[1, 2].item() == 100.0 and y._base is x._base


# torch's reductions give contiguous results even for a permuted input (NumPy's would follow
# the input's order); found by the program fuzzer
REDUCTIONS = {
    "sum": lambda t: t.sum(2), "mean": lambda t: t.mean(2), "amax": lambda t: t.amax(2),
    "amin_keepdim": lambda t: t.amin(1, keepdim=True), "var": lambda t: t.var(2),
    "std": lambda t: t.std(1), "prod": lambda t: t.prod(2), "logsumexp": lambda t: t.logsumexp(2),
    "sum_keepdim": lambda t: t.sum(2, keepdim=True), "var_two_dims": lambda t: t.var((0, 2)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_of_permuted_input_is_contiguous_like_torch(name):
    def run(lib):
        out = REDUCTIONS[name](lib.arange(24.).reshape(2, 3, 4).permute(2, 0, 1))
        return out.is_contiguous(), out.stride(), out.tolist()

    assert run(hookgrad) == run(torch)


# clone keeps the input's memory order; an expanded (stride 0) dimension keeps its place in
# that order, where NumPy's order="K" would make it innermost (found by the program fuzzer)
CLONE_INPUTS = {
    "expanded_new_dim": lambda lib: lib.ones(2, 3).expand(4, 2, 3),
    "expanded_last_dim": lambda lib: lib.ones(3, 1).expand(3, 4),
    "expanded_transposed": lambda lib: lib.ones(1, 3).expand(4, 3).t(),
    "expanded_permuted": lambda lib: lib.ones(2, 1, 3).expand(2, 4, 3).permute(2, 1, 0),
    "sliced_transposed": lambda lib: lib.ones(3, 4).t()[:, ::2],
    "sliced_permuted": lambda lib: lib.ones(2, 3, 4).permute(1, 2, 0)[:, ::2],
}


@pytest.mark.parametrize("name", sorted(CLONE_INPUTS))
def test_clone_keeps_torchs_memory_order(name):
    def run(lib):
        out = CLONE_INPUTS[name](lib).clone()
        return out.is_contiguous(), out.stride()

    assert run(hookgrad) == run(torch)

