"""The in-place Tensor methods beside existing out-of-place ops (comparisons, logical and bitwise
updates, remainder_, copysign_, xlogy_, divide_, cumsum_, inverse hyperbolics, in-place views)
and the method spellings of existing functions, each against torch on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, compare_double_backward

R = np.random.default_rng(7)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))
POS = np.abs(A) + 0.5
ROW = R.standard_normal(4)


def _nonleaf(lib, x):
    return x * 1


# -- method spellings of functions hookgrad has ------------------------------------------------
@pytest.mark.parametrize("name", ["greater", "greater_equal", "less", "less_equal", "not_equal"])
def test_comparison_method_aliases(name):
    compare(lambda lib, a, b: getattr(a, name)(b), A, np.where(R.random((3, 4)) < .5, A, B))
    compare(lambda lib, a: getattr(a, name)(0.1), A)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_method_aliases(name):
    ints = R.integers(-8, 8, (3, 4))
    compare(lambda lib, a, b: getattr(a, name)(b), ints, R.integers(-8, 8, (3, 4)))
    compare(lambda lib, a: getattr(a, name)(3), ints)
    compare(lambda lib, a, b: getattr(a, name)(b), ints > 0, ints < 3)
    assert_same_error(lambda lib: getattr(lib.tensor(A), name)(lib.tensor(B)))


def test_bitwise_not_method():
    compare(lambda lib, a: a.bitwise_not(), R.integers(-8, 8, (5,)))
    compare(lambda lib, a: a.bitwise_not(), R.integers(-8, 8, (5,)) > 0)


def test_short_caster():
    compare(lambda lib, a: a.short(), A * 100, grad=False)


def test_addmm_and_baddbmm_methods():
    m1, m2 = R.standard_normal((3, 5)), R.standard_normal((5, 4))
    compare(lambda lib, s, a, b: s.addmm(a, b, beta=0.5, alpha=2.0), A, m1, m2)
    compare(lambda lib, s, a, b: s.addmm(a, b), ROW, m1, m2)
    compare_double_backward(lambda lib, s, a, b: s.addmm(a, b, alpha=3.0), A, m1, m2)
    b1, b2 = R.standard_normal((2, 3, 5)), R.standard_normal((2, 5, 4))
    compare(lambda lib, s, a, b: s.baddbmm(a, b, beta=2.0, alpha=0.5), ROW, b1, b2)


def test_addmm_and_baddbmm_in_place():
    m1, m2 = R.standard_normal((3, 5)), R.standard_normal((5, 4))
    compare(lambda lib, s, a, b: _nonleaf(lib, s).addmm_(a, b, beta=0.5, alpha=2.0), A, m1, m2)
    b1, b2 = R.standard_normal((2, 3, 5)), R.standard_normal((2, 5, 4))
    compare(lambda lib, s, a, b: _nonleaf(lib, s).baddbmm_(a, b, alpha=0.5),
            R.standard_normal((2, 3, 4)), b1, b2)
    assert_same_error(lambda lib: lib.tensor(ROW).addmm_(lib.tensor(m1), lib.tensor(m2)))
    assert_same_error(lambda lib: lib.tensor(A).baddbmm_(lib.tensor(b1), lib.tensor(b2)))
    assert_same_error(lambda lib: lib.tensor(A, requires_grad=True).addmm_(
        lib.tensor(m1), lib.tensor(m2)))


def test_every_torch_method_whose_function_hookgrad_has_is_a_method():
    missing = []
    for name in dir(torch.Tensor):
        if name.startswith("_") or hasattr(hookgrad.Tensor, name):
            continue
        base = name[:-1] if name.endswith("_") else name
        if hasattr(hookgrad, name) or (name.endswith("_") and (
                hasattr(hookgrad.Tensor, base) or hasattr(hookgrad, base))):
            missing.append(name)
    assert missing == []


# -- comparisons written into self ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_",
                                  "greater_equal_", "less_", "less_equal_", "not_equal_"])
def test_comparison_in_place(name):
    other = np.where(R.random((3, 4)) < .5, A, B)
    compare(lambda lib, a, b: getattr(_nonleaf(lib, a), name)(b), A, other)
    compare(lambda lib, a, b: getattr(_nonleaf(lib, a), name)(b), A, ROW)
    compare(lambda lib, a: getattr(_nonleaf(lib, a), name)(0.25), A)
    compare(lambda lib, a: getattr(a, name)(2.5), R.integers(0, 5, (6,)))  # compared as floats
    compare(lambda lib, a, b: getattr(a, name)(b), R.integers(0, 5, (6,)) > 2,
            R.integers(0, 5, (6,)))
    for lib in (torch, hookgrad):
        x = lib.tensor(A, requires_grad=True) * 1
        assert getattr(x, name)(1.0).grad_fn.name() == getattr(
            torch.tensor(A, requires_grad=True) * 1, name)(1.0).grad_fn.name()
    assert_same_error(lambda lib: getattr(lib.tensor(ROW), name)(lib.tensor(A)))
    assert_same_error(lambda lib: getattr(lib.tensor(A, requires_grad=True), name)(0.0))


@pytest.mark.parametrize("name", ["logical_and_", "logical_or_", "logical_xor_"])
def test_logical_in_place_records_nothing(name):
    other = np.where(R.random((3, 4)) < .5, 0.0, B)
    compare(lambda lib, a, b: getattr(a, name)(b), np.where(R.random((3, 4)) < .5, 0.0, A), other)
    compare(lambda lib, a, b: getattr(a, name)(b), R.integers(0, 3, (6,)), R.integers(0, 3, (6,)))
    for lib in (torch, hookgrad):
        x = lib.tensor(A, requires_grad=True) * 1
        node = x.grad_fn
        getattr(x, name)(lib.tensor(B))
        assert x.grad_fn is node and x._version == 1
        leaf = lib.tensor(A, requires_grad=True)
        getattr(leaf, name)(lib.tensor(B))  # torch allows it: nothing is recorded
    assert_same_error(lambda lib: getattr(lib.tensor([True, False]), name)(lib.tensor([[1], [2]])))


def test_logical_not_in_place():
    compare(lambda lib, a: a.logical_not_(), np.where(R.random((3, 4)) < .5, 0.0, A), grad=False)
    compare(lambda lib, a: a.logical_not_(), R.integers(0, 3, (6,)))


@pytest.mark.parametrize("name", ["bitwise_and_", "bitwise_or_", "bitwise_xor_"])
def test_bitwise_in_place(name):
    compare(lambda lib, a, b: getattr(a, name)(b), R.integers(-8, 8, (3, 4)),
            R.integers(-8, 8, (4,)))
    compare(lambda lib, a: getattr(a, name)(5), R.integers(-8, 8, (3, 4)))
    compare(lambda lib, a: getattr(a, name)(True), R.integers(0, 2, (5,)) > 0)
    assert_same_error(lambda lib: getattr(lib.tensor(A), name)(lib.tensor(B)))
    assert_same_error(lambda lib: getattr(lib.tensor([True]), name)(lib.tensor([3])))


def test_bitwise_not_in_place():
    compare(lambda lib, a: a.bitwise_not_(), R.integers(-8, 8, (5,)))
    compare(lambda lib, a: a.bitwise_not_(), R.integers(0, 2, (5,)) > 0)
    assert_same_error(lambda lib: lib.tensor(A).bitwise_not_())


# -- arithmetic in place -------------------------------------------------------------------------
IN_PLACE = {
    "remainder_ tensor": (lambda lib, a, b: _nonleaf(lib, a).remainder_(b), (A * 3, POS)),
    "remainder_ number": (lambda lib, a: _nonleaf(lib, a).remainder_(0.7), (A * 3,)),
    "divide_ floor": (lambda lib, a, b: _nonleaf(lib, a).divide_(b, rounding_mode="floor"),
                      (A * 3, POS)),
    "divide_ trunc number": (lambda lib, a: _nonleaf(lib, a).divide_(
        0.3, rounding_mode="trunc"), (A,)),
    "divide_": (lambda lib, a, b: _nonleaf(lib, a).divide_(b), (A, POS)),
    "true_divide_": (lambda lib, a, b: _nonleaf(lib, a).true_divide_(b), (A, POS)),
    "multiply_": (lambda lib, a, b: _nonleaf(lib, a).multiply_(b), (A, B)),
    "subtract_": (lambda lib, a, b: _nonleaf(lib, a).subtract_(b, alpha=2), (A, B)),
    "copysign_ tensor": (lambda lib, a, b: _nonleaf(lib, a).copysign_(b), (A, B)),
    "copysign_ number": (lambda lib, a: _nonleaf(lib, a).copysign_(-2.0), (A,)),
    "xlogy_ tensor": (lambda lib, a, b: _nonleaf(lib, a).xlogy_(b), (A, POS)),
    "xlogy_ number": (lambda lib, a: _nonleaf(lib, a).xlogy_(3.0), (A,)),
    "arctan2_": (lambda lib, a, b: _nonleaf(lib, a).arctan2_(b), (A, B)),
    "cumsum_": (lambda lib, a: _nonleaf(lib, a).cumsum_(1), (A,)),
    "cumsum_ negative dim": (lambda lib, a: _nonleaf(lib, a).cumsum_(-2), (A,)),
    "cumprod_": (lambda lib, a: _nonleaf(lib, a).cumprod_(0), (A,)),
}
NO_DERIVATIVE = {
    "floor_divide_": (lambda lib, a, b: _nonleaf(lib, a).floor_divide_(b), (A * 3, POS)),
    "floor_divide_ number": (lambda lib, a: _nonleaf(lib, a).floor_divide_(0.4), (A * 3,)),
    "acosh_": (lambda lib, a: _nonleaf(lib, a).acosh_(), (POS + 1,)),
    "arccosh_": (lambda lib, a: _nonleaf(lib, a).arccosh_(), (POS + 1,)),
    "asinh_": (lambda lib, a: _nonleaf(lib, a).asinh_(), (A,)),
    "arcsinh_": (lambda lib, a: _nonleaf(lib, a).arcsinh_(), (A,)),
    "atanh_": (lambda lib, a: _nonleaf(lib, a).atanh_(), (np.tanh(A),)),
    "arctanh_": (lambda lib, a: _nonleaf(lib, a).arctanh_(), (np.tanh(A),)),
}


@pytest.mark.parametrize("case", NO_DERIVATIVE, ids=str)
def test_in_place_without_derivative(case):
    # torch records a node whose backward raises: the values match, backward fails alike
    fn, arrays = NO_DERIVATIVE[case]
    compare(fn, *arrays, grad=False)
    compare(fn, *(a.astype(np.float32) for a in arrays), grad=False)
    names = [fn(lib, *(lib.tensor(a, requires_grad=True) for a in arrays)).grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]
    assert_same_error(lambda lib: fn(lib, *(lib.tensor(a, requires_grad=True)
                                            for a in arrays)).sum().backward())


@pytest.mark.parametrize("case", IN_PLACE, ids=str)
def test_arithmetic_in_place(case):
    fn, arrays = IN_PLACE[case]
    compare(fn, *arrays)
    compare(fn, *(a.astype(np.float32) for a in arrays))
    names = [fn(lib, *(lib.tensor(a, requires_grad=True) for a in arrays)).grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]


@pytest.mark.parametrize("case", ["xlogy_ tensor", "copysign_ tensor", "cumprod_", "xlogy_ number",
                                  "remainder_ tensor", "cumsum_"])
def test_arithmetic_in_place_double_backward(case):
    fn, arrays = IN_PLACE[case]
    compare_double_backward(fn, *arrays)


def test_integer_in_place_arithmetic():
    ints = R.integers(-9, 9, (3, 4))
    compare(lambda lib, a: a.remainder_(4), ints)
    compare(lambda lib, a: a.floor_divide_(4), ints)
    compare(lambda lib, a: a.cumsum_(0), ints)
    compare(lambda lib, a: a.cumprod_(1), ints)
    assert_same_error(lambda lib: lib.tensor(A).cumsum_(0, dtype=lib.float32))
    assert_same_error(lambda lib: lib.tensor(ints).cumprod_(0, dtype=lib.int32))
    assert_same_error(lambda lib: lib.tensor(ints).divide_(2))


# -- in-place views ------------------------------------------------------------------------------
VIEWS = {
    "t_": lambda x: x.t_(), "transpose_": lambda x: x.transpose_(0, 2),
    "swapaxes_": lambda x: x.swapaxes_(1, 2), "swapdims_": lambda x: x.swapdims_(0, 1),
    "squeeze_": lambda x: x.squeeze_(), "squeeze_ dim": lambda x: x.squeeze_(1),
    "squeeze_ dims": lambda x: x.squeeze_((1, 0)),
    "unsqueeze_": lambda x: x.unsqueeze_(-1),
    "as_strided_": lambda x: x.as_strided_((3, 2), (1, 3)),
    "as_strided_ offset": lambda x: x.as_strided_((2, 2), (2, 1), 1),
}


@pytest.mark.parametrize("case", VIEWS, ids=str)
def test_view_in_place(case):
    array = R.standard_normal((4, 3) if case == "t_" else (2, 1, 3))
    fn = VIEWS[case]

    def run(lib, a):
        x = a * 2
        assert fn(x) is x
        return x * x

    compare(run, array)
    names = [fn(lib.tensor(array, requires_grad=True) * 1).grad_fn.name()
             for lib in (torch, hookgrad)]
    assert names[0] == names[1]
    for lib in (torch, hookgrad):  # a plain tensor and a view that needs no gradient
        x = lib.tensor(array)
        fn(x)
        assert_close(x, fn(torch.tensor(array)))
        assert x.stride() == fn(torch.tensor(array)).stride()
        base = lib.tensor(np.stack([array, array]))
        view = base[1]
        fn(view)
        assert view._base is base and view.shape == fn(torch.tensor(array)).shape
    assert_same_error(lambda lib: fn(lib.tensor(array, requires_grad=True)))


@pytest.mark.parametrize("case", VIEWS, ids=str)
def test_view_in_place_on_a_view_that_requires_grad(case):
    array = R.standard_normal((2, 4, 3) if case == "t_" else (2, 2, 1, 3))
    fn = VIEWS[case]

    def run(lib, a):
        x = a * 2
        view = x[1]
        fn(view)
        assert view._base is x
        x.mul_(3)  # the view's history is rebuilt from its base
        return view * view, x

    compare(run, array)
    assert_same_error(lambda lib: fn(lib.tensor(array, requires_grad=True)[0]))


def test_view_in_place_under_no_grad_keeps_the_leaf():
    for lib in (torch, hookgrad):
        leaf = lib.tensor(A, requires_grad=True)
        with lib.no_grad():
            leaf.t_()
        assert leaf.is_leaf and leaf.requires_grad and leaf.shape == (4, 3)


# -- torch-level spellings of methods --------------------------------------------------------
@pytest.mark.parametrize("name", ["exp_", "sigmoid_", "fix_", "zero_", "asinh_", "relu_"])
def test_top_level_in_place_functions(name):
    compare(lambda lib, a: getattr(lib, name)(a), A, grad=False)


def test_top_level_fix_and_detach():
    compare(lambda lib, a: lib.fix(a * 3), A)
    for lib in (torch, hookgrad):
        x = lib.tensor(A, requires_grad=True)
        assert not lib.detach(x).requires_grad
    compare(lambda lib, a, b: lib.xlogy_(a * 1, b), A, POS)


@pytest.mark.parametrize("name", ["eq_", "lt_", "ge_", "logical_and_", "logical_or_",
                                  "logical_xor_"])
@pytest.mark.parametrize("dtype", ["bool", "float32", "int64"])
@pytest.mark.parametrize("other_shape", [(3, 3), (2, 2, 3)])
def test_comparison_and_logical_in_place_refuse_shapes_that_do_not_fit(name, dtype, other_shape):
    # torch's broadcast error (a RuntimeError), found before anything is computed: an operand
    # that does not broadcast, or one that would widen self
    assert_same_error(lambda lib: getattr(lib.zeros(2, 3, dtype=getattr(lib, dtype)), name)(
        lib.ones(*other_shape, dtype=getattr(lib, dtype))))
