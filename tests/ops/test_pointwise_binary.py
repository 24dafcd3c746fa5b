"""lerp on corner inputs against torch: infinite end points, weights on both sides of 1/2,
float16 computed in float32."""
import numpy as np

from conftest import assert_same_error, compare

INF = np.inf
START = np.array([-INF, -INF, 1.0, INF, 1.5, 0.1, -2.0])
END = np.array([-1.0, -1.0, INF, 2.0, 4.5, 0.7, 3.0])


def test_lerp_number_weights_keep_infinities_and_end_points():
    for weight in (0.0, 0.25, 0.5, 0.75, 1.0, -0.5, 1.5):
        compare(lambda lib, a, b: lib.lerp(a, b, weight), START, END)
        compare(lambda lib, a, b: lib.lerp(a, b, weight), START.astype(np.float32),
                END.astype(np.float32))


def test_lerp_tensor_weights():
    weight = np.array([0.75, 0.5, 0.3, 0.9, 1.0, 0.49, 0.51])
    compare(lambda lib, a, b, w: lib.lerp(a, b, w), START, END, weight)
    compare(lambda lib, a, b, w: a.clone().lerp_(b, w), START, END, weight, grad=False)


def test_lerp_float16_rounds_once():
    start = np.linspace(-3, 3, 41).astype(np.float16)
    end = (start * 3 + 0.1).astype(np.float16)
    for weight in (0.7, 0.3, 0.55):
        compare(lambda lib, a, b: lib.lerp(a, b, weight), start, end, grad=False)
    compare(lambda lib, a, b, w: lib.lerp(a, b, w), start, end,
            np.full(41, 0.7, np.float16), grad=False)


def test_lerp_refuses_integer_and_bool_tensors_and_number_ends():
    assert_same_error(lambda lib: lib.lerp(lib.tensor([1, 2]), lib.tensor([3, 4]), 0.5))
    assert_same_error(lambda lib: lib.lerp(lib.tensor([True]), lib.tensor([False]), 0.5))
    assert_same_error(lambda lib: lib.lerp(lib.tensor([1, 2]), lib.tensor([3, 4]),
                                           lib.tensor([1, 1])))
    assert_same_error(lambda lib: lib.tensor([1, 2]).lerp_(lib.tensor([3, 4]), 0.5))
    assert_same_error(lambda lib: lib.lerp(lib.tensor([1.0]), 2, 0.5))
