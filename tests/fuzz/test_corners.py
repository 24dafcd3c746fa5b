"""The corner-input probe: its comparison catches what it should, and the op families fixed
after it found them stay in agreement with torch over its whole input matrix."""
import numpy as np
import torch

import hookgrad
from tests.fuzz import corners


def test_differ_reports_value_dtype_nan_and_error_mismatches():
    same = ("ok", hookgrad.tensor([1.0, float("nan")]))
    assert corners.differ(same, ("ok", torch.tensor([1.0, float("nan")]))) == ""
    assert "NaN" in corners.differ(("ok", hookgrad.tensor([1.0, 2.0])),
                                   ("ok", torch.tensor([1.0, float("nan")])))
    assert "dtype" in corners.differ(("ok", hookgrad.tensor([1, 2])),
                                     ("ok", torch.tensor([1.0, 2.0])))
    assert "error type" in corners.differ(("err", TypeError("x")), ("err", RuntimeError("x")))
    assert corners.differ(("ok", hookgrad.tensor(1)), ("err", RuntimeError("x")))


def test_inputs_cover_0d_empty_and_strided_layouts():
    labels = [label for label, *_ in corners.inputs(["float32"])]
    assert {"float32/scalar/contiguous", "float32/empty3/stepped",
            "float32/mat/transposed", "float32/vec/expanded"} <= set(labels)
    for label, array, dtype, layout in corners.inputs(["int8"]):
        ours, theirs = (corners.make(lib, array, dtype, layout) for lib in (hookgrad, torch))
        assert tuple(ours.shape) == tuple(theirs.shape) == array.shape
        assert ours.stride() == theirs.stride(), label
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_fixed_families_agree_with_torch_on_every_corner():
    names = {"pow_scalar_base", "rpow", "erfc", "nan_to_num", "nan_to_num_args", "floor", "round",
             "positive", "deg2rad"}
    probes, found = corners.run_unary({n: corners.UNARY[n] for n in names})
    assert probes > 1000 and not found, found[:5]
    reduce = {n: f for n, f in corners.REDUCE.items()
              if n.startswith(("quantile", "nansum", "sort", "count_nonzero", "all", "any",
                               "argmax", "unique", "roll"))}
    probes, found = corners.run_unary(reduce)
    assert probes > 1000 and not found, found[:5]
