"""Calls with a problem (or two), against torch: the same exception type and a message that
starts as torch's does, so the problem torch reports first is the one reported."""
import pytest
import torch

import hookgrad

from tests.conftest import assert_close, error_of


def _grid(lib):
    return lib.arange(6, dtype=lib.float64).reshape(2, 3)


CASES = {
    # memory before shapes: a transposed view of self is refused even when shapes differ too
    "copy_from_own_transpose_other_shape": lambda lib: _grid(lib).copy_(_grid(lib).t()),
    "copy_from_own_transpose": lambda lib: (lambda x: x.copy_(x.t()))(
        lib.arange(9.0).reshape(3, 3)),
    # a 0-d index tensor on a 0-d tensor is one index too many, a Python int a misuse
    "0d_tensor_index_of_0d": lambda lib: lib.tensor(5.0)[lib.tensor(0)],
    "int_index_of_0d": lambda lib: lib.tensor(5.0)[0],
    "two_0d_tensor_indices": lambda lib: lib.zeros(3)[0, lib.tensor(0)],
    "take_from_empty": lambda lib: lib.take(lib.zeros(0), lib.tensor([0])),
    "take_nothing_from_empty": lambda lib: lib.take(lib.zeros(0), lib.tensor([],
                                                                        dtype=lib.int64)),
    # index_put: the values' shape, then the dtypes, then the indices
    "index_put_shape_and_dtype": lambda lib: lib.zeros(3, dtype=lib.float64).index_put_(
        (lib.tensor([1, 2]),), lib.tensor([1.0, 2.0, 3.0])),
    "index_put_dtype_and_range": lambda lib: lib.zeros(3, dtype=lib.float64).index_put_(
        (lib.tensor([3]),), lib.tensor(1.0)),
    "index_put_range": lambda lib: lib.zeros(3).index_put_((lib.tensor([3]),), lib.tensor(1.0)),
    "index_put_shape": lambda lib: lib.zeros(3).index_put_((lib.tensor([0, 1]),),
                                                           lib.ones(3)),
    # the mask is tensor a in the out-of-place masked ops' broadcast message
    "masked_fill_mask_shape": lambda lib: lib.zeros(3).masked_fill(lib.tensor([True, False]),
                                                                   1.0),
    "masked_fill__mask_shape": lambda lib: lib.zeros(3).masked_fill_(lib.tensor([True, False]),
                                                                     1.0),
    "masked_fill_2d_mask": lambda lib: lib.zeros(3, 4).masked_fill(
        lib.ones(2, 1, dtype=lib.bool), 1.0),
    "masked_select_mask_shape": lambda lib: lib.zeros(3).masked_select(
        lib.tensor([True, False])),
    # median and nanmedian: an empty dim before the dtype, both named median()
    "median_empty_bool": lambda lib: lib.zeros(0, dtype=lib.bool).median(0),
    "nanmedian_empty": lambda lib: lib.zeros(2, 0).nanmedian(-1),
    "median_0d_bool": lambda lib: lib.tensor(True).median(0),
    # in-place arithmetic: sub's bool refusal, then memory, shape and the cast
    "bool_sub_shape": lambda lib: lib.tensor([True]).sub_(lib.tensor([True, False])),
    "int_add_float_shape": lambda lib: lib.tensor([1, 2]).add_(lib.tensor([1.5, 2.5, 3.5])),
    "int_div_grows": lambda lib: lib.tensor([1, 2]).div_(lib.ones(2, 2)),
    "int_clamp_tensor_shape": lambda lib: lib.tensor([1, 2]).clamp_(lib.tensor([0.5] * 3)),
    "bool_clamp_float_tensor": lambda lib: lib.tensor([True]).clamp_(
        min=lib.tensor(1.5, dtype=lib.float64)),
    "bool_clamp_float_number": lambda lib: lib.tensor([True]).clamp_(min=1.5),
    "int_clamp_float_number": lambda lib: lib.tensor([1]).clamp_(min=1.5),
    # amax/amin: each dim as given is checked for size 0 before repeats are looked at
    "amax_empty_repeated_dims": lambda lib: lib.zeros(0, 3).amax((0, -2)),
    "amax_empty_dims_wrap": lambda lib: lib.zeros(0).amax((0, -1)),
    "amin_negative_empty_dim": lambda lib: lib.zeros(2, 0).amin((0, -1)),
    "amax_repeated_nonempty": lambda lib: lib.zeros(0, 3).amax((1, 1)),
    "amax_empty_then_out_of_range": lambda lib: lib.zeros(0, 3).amax((0, 5)),
    # norms without an identity over empty dims
    "vector_norm_negative_empty": lambda lib: lib.linalg.vector_norm(lib.zeros(2, 0), -1),
    "vector_norm_negative_empty_dim": lambda lib: lib.linalg.vector_norm(lib.zeros(2, 0), -0.5,
                                                                         1),
    "vector_norm_inf_other_dim": lambda lib: lib.linalg.vector_norm(lib.zeros(2, 0),
                                                                    float("inf"), 0),
    "vector_norm_inf_both_dims": lambda lib: lib.linalg.vector_norm(
        lib.zeros(2, 0), float("-inf"), (0, 1), keepdim=True),
    "norm_negative_empty": lambda lib: lib.norm(lib.zeros(0, 3), -1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_reported_problem(name):
    expected = error_of(lambda: CASES[name](torch))
    outcome = error_of(lambda: CASES[name](hookgrad))
    if expected is None:
        assert outcome is None, outcome
        assert_close(CASES[name](hookgrad), CASES[name](torch))
        return
    assert outcome is not None and outcome[0] is expected[0], (outcome, expected)
    assert outcome[1].startswith(expected[1]), (outcome, expected)


@pytest.mark.parametrize("shape", [(0, 2), (2, 0), (3, 0, 2)])
@pytest.mark.parametrize("ord", ["fro", "nuc", float("inf"), float("-inf"), 1, -1, 2, -2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norms_of_empty_matrices(shape, ord, keepdim):
    def run(lib):
        return lib.linalg.matrix_norm(lib.zeros(*shape), ord, keepdim=keepdim)

    expected = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected
    if expected is None:
        assert_close(run(hookgrad), run(torch))
