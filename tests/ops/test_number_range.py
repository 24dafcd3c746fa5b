"""Number arguments converted to a tensor's dtype (fill values, bounds, alpha, exponents) are
range-checked as torch checks them, while number operands wrap; and the order in which torch
reports a shape, a cast and a kernel problem of one in-place call."""
import warnings

import pytest
import torch

import hookgrad

from tests.conftest import assert_close, error_of

NUMBERS = [(("int8",), 300), (("int8",), -129), (("int8",), 127.5), (("int8",), float("nan")),
           (("uint8",), -1), (("uint8",), -300), (("uint8",), 256), (("uint8",), -1.5),
           (("int32",), 2 ** 40), (("int16",), 40000), (("float16",), 1e6),
           (("float16",), float("inf")), (("bfloat16",), 1e40), (("float32",), 1e40),
           (("float64",), 1e300), (("bool",), 7)]

CALLS = {
    "fill_": lambda lib, x, v: x.fill_(v),
    "fill_one_element": lambda lib, x, v: x[:1].fill_(v),
    "masked_fill": lambda lib, x, v: x.masked_fill(lib.tensor([True, False]), v),
    "index_fill": lambda lib, x, v: x.index_fill(0, lib.tensor([0]), v),
    "scatter": lambda lib, x, v: x.scatter(0, lib.tensor([0]), v),
    "clamp_max": lambda lib, x, v: x.clamp(max=v),
    "where": lambda lib, x, v: lib.where(lib.tensor([True, False]), x, v),
    "pow": lambda lib, x, v: x.pow(v),
    "add_alpha": lambda lib, x, v: lib.add(x, x, alpha=v),
    "addcmul_value": lambda lib, x, v: lib.addcmul(x, x, x, value=v),
    "setitem": lambda lib, x, v: x.__setitem__(0, v),
    "full": lambda lib, x, v: lib.full((2,), v, dtype=x.dtype),
    "add_operand": lambda lib, x, v: x + v,
    "eq_operand": lambda lib, x, v: x == v,
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("dtypes,value", NUMBERS, ids=[f"{d[0]}-{v}" for d, v in NUMBERS])
def test_number_conversion(dtypes, value, call):
    def run(lib):
        x = lib.tensor([1, 2]).to(getattr(lib, dtypes[0]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = CALLS[call](lib, x, value)
        return x if result is None else result

    expected = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected
    if expected is None:
        assert_close(run(hookgrad).float(), run(torch).float())


ORDER = {
    "bool_add_shape_and_dtype": lambda lib: lib.tensor([True, False]).add_(
        lib.tensor([1.5, 2.5, 3.5])),
    "int_mul_grows_and_float": lambda lib: lib.tensor([1, 2]).mul_(lib.tensor([[1.5], [2.5]])),
    "int_shift_float_number": lambda lib: lib.tensor([1, 2]).__ilshift__(1.5),
    "int_shift_float_0d": lambda lib: lib.tensor([1, 2]).bitwise_left_shift_(lib.tensor(1.5)),
    "int_and_float_shape": lambda lib: lib.tensor([1, 2]).bitwise_and_(lib.tensor([1.5] * 3)),
    "int_and_float": lambda lib: lib.tensor([1, 2]).__iand__(lib.tensor([1.5, 2.5])),
    "bool_or_float": lambda lib: lib.tensor([True]).__ior__(1.5),
    "bool_xor_int_0d": lambda lib: lib.tensor([True]).bitwise_xor_(lib.tensor(3)),
    "float_and_int": lambda lib: lib.tensor([1.0]).bitwise_and_(lib.tensor([1])),
    "int_rshift_int": lambda lib: lib.tensor([8, 9]).__irshift__(lib.tensor([1, 2])),
    "ldexp_bool_exponent": lambda lib: lib.ldexp(lib.tensor([1.0, 2.0]),
                                                 lib.tensor([True, False])),
    "ldexp_bool_exponent_shape": lambda lib: lib.ldexp(lib.tensor([1.0, 2.0]),
                                                       lib.tensor([True] * 3)),
    "ldexp_bool_exponent_inplace": lambda lib: lib.tensor([1.0]).ldexp_(lib.tensor([True])),
    "ldexp_int_self_bool_exponent": lambda lib: lib.ldexp(lib.tensor([3]), lib.tensor([True])),
    "ldexp_bool_both": lambda lib: lib.ldexp(lib.tensor([True]), lib.tensor([True])),
    "kthvalue_0d_bool": lambda lib: lib.kthvalue(lib.tensor(True), 1),
    "kthvalue_0d_bool_keepdim": lambda lib: lib.kthvalue(lib.tensor(False), 1, 0, True),
    "kthvalue_0d_bool_k2": lambda lib: lib.kthvalue(lib.tensor(True), 2),
    "kthvalue_1d_bool": lambda lib: lib.kthvalue(lib.tensor([True]), 1),
    "addcmul_bool": lambda lib: lib.addcmul(lib.tensor([True]), lib.tensor([True]),
                                            lib.tensor([True])),
    "addcmul_bool_inplace": lambda lib: lib.tensor([True]).addcmul_(lib.tensor([True]),
                                                                    lib.tensor([True])),
    "addcmul_int_float_value": lambda lib: lib.addcmul(lib.tensor([1]), lib.tensor([3]),
                                                       lib.tensor([1]), value=1.5),
    "addcmul_int_negative_float_value": lambda lib: lib.addcmul(
        lib.tensor([10]), lib.tensor([3]), lib.tensor([1]), value=-1.5),
}


@pytest.mark.parametrize("name", sorted(ORDER))
def test_which_problem_is_reported_first(name):
    expected = error_of(lambda: ORDER[name](torch))
    outcome = error_of(lambda: ORDER[name](hookgrad))
    if expected is None:
        assert outcome is None
        ours, theirs = ORDER[name](hookgrad), ORDER[name](torch)
        for a, b in zip(ours if isinstance(ours, tuple) else (ours,),
                        theirs if isinstance(theirs, tuple) else (theirs,)):
            assert_close(a, b)
    else:
        assert outcome is not None and outcome[0] is expected[0], (outcome, expected)
        assert outcome[1].startswith(expected[1]), (outcome, expected)
