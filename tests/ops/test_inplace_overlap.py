"""In-place ops refuse a tensor only when one of its elements is really reached twice."""
import pytest
import torch

import hookgrad

from tests.conftest import assert_close, error_of

# each builds a view to write into; the comment says why torch does or does not refuse it
VIEWS = {
    "expand_stride1_slice": lambda lib: lib.zeros(3, 1).expand(3, 4)[:, 1],  # stride (1,)
    "expand_stride0_slice": lambda lib: lib.zeros(1, 4).expand(3, 4)[:, 1],  # stride (0,)
    "expand_whole": lambda lib: lib.zeros(3, 1).expand(3, 4),
    "expand_size1_dims": lambda lib: lib.zeros(3, 1).expand(3, 1),
    "expand_new_dim_slice": lambda lib: lib.zeros(4).expand(2, 4)[0],
    "expand_transposed_slice": lambda lib: lib.zeros(1, 3).expand(2, 3).t()[:, 0],
    "expand_diagonal": lambda lib: lib.zeros(3, 1).expand(3, 3).diagonal(),  # stride (1,)
}


@pytest.mark.parametrize("name", sorted(VIEWS))
@pytest.mark.parametrize("op", ["add_", "mul_", "fill_", "zero_", "copy_"])
def test_inplace_on_views_of_expanded_and_strided(name, op):
    def run(lib):
        view = VIEWS[name](lib)
        if op == "copy_":
            view.copy_(lib.ones(view.shape))
        elif op == "fill_":
            view.fill_(2.0)
        elif op == "zero_":
            view.zero_()
        else:
            getattr(view, op)(2.0)
        return view

    expected_error = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected_error
    if expected_error is None:
        assert_close(run(hookgrad), run(torch))


def test_setitem_on_stride1_slice_of_expanded():
    def run(lib):
        view = lib.zeros(3, 1).expand(3, 4)[:, 1]
        view[1:] = 5.0
        return view

    assert_close(run(hookgrad), run(torch))


@pytest.mark.parametrize("name", sorted(VIEWS))
@pytest.mark.parametrize("value", ["number", "zero_dim", "row"])
def test_index_assignment_into_views_of_expanded(name, value):
    """``view[...] = value`` copies (torch expands the value), so it refuses a target that
    reaches one element twice even where a direct ``fill_`` is allowed (found by the fuzzer)."""
    def run(lib):
        view = VIEWS[name](lib)
        source = {"number": 2.0, "zero_dim": lib.tensor(2.0),
                  "row": lib.ones(view.shape[-1:])}[value]
        view[...] = source
        return view

    expected_error = error_of(lambda: run(torch))
    assert error_of(lambda: run(hookgrad)) == expected_error
    if expected_error is None:
        assert_close(run(hookgrad), run(torch))
