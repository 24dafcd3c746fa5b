"""Every worked example in examples/ prints under hookgrad what it prints under torch, with only
the import changed; and the comparison those checks rest on is itself checked here."""
from __future__ import annotations

from pathlib import Path

import pytest
from _script_output import as_torch, first_difference, numbers_match, run_script

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))

# What each example must keep exercising; a test below fails if an edit drops one.
COVERS = {
    "autograd_rules.py": ["register_post_accumulate_grad_hook", "register_prehook",
                          "retain_grad", "inputs=[", "sin_()", "no_grad", "enable_grad",
                          "set_grad_enabled", "inference_mode", "_version",
                          "except RuntimeError"],
    "custom_functions.py": ["gradgradcheck", "create_graph=True", "needs_input_grad",
                            "mark_non_differentiable", "once_differentiable",
                            "set_materialize_grads(False)"],
    "digits_features.py": ["load_digits", "nn.Conv2d", "register_forward_hook",
                           "register_full_backward_hook", "register_hook", "optimizer.step()"],
    "dynamic_graphs.py": ["nn.Parameter", "for _ in range(repeats)", "register_forward_pre_hook",
                          "register_full_backward_hook", "register_hook",
                          "register_post_accumulate_grad_hook", "optimizer.step()"],
    "saved_tensors_on_disk.py": ["saved_tensors_hooks", "torch.save", "torch.load",
                                 "TemporaryDirectory", "_raw_saved_self.register_hooks",
                                 "save_on_cpu"],
}


def test_every_example_is_listed():
    assert sorted(COVERS) == [path.name for path in SCRIPTS]


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.stem for path in SCRIPTS])
def test_example_prints_what_torch_prints(script):
    expected = run_script(script, "torch")
    actual = run_script(script, "hookgrad")
    assert len(expected.splitlines()) > 5, "the example printed (almost) nothing under torch"
    difference = first_difference(actual, expected)
    assert difference is None, f"{script.name}: {difference}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.stem for path in SCRIPTS])
def test_example_imports_only_hookgrad_and_keeps_its_subject(script):
    source = script.read_text()
    assert "import hookgrad as torch" in source
    assert "import torch" not in source.replace("import torch`", "")
    for needle in COVERS[script.name]:
        assert needle in source, f"{script.name} no longer uses {needle}"


# -- the comparison itself -------------------------------------------------------------------
def test_as_torch_rewrites_only_imports():
    source = "import hookgrad as torch\nfrom hookgrad import nn\nprint('hookgrad')\n"
    assert as_torch(source) == "import torch as torch\nfrom torch import nn\nprint('hookgrad')\n"


@pytest.mark.parametrize("actual, expected, same", [
    ("0.1235", "0.1234", True),            # rounds the other way at the printed precision
    ("0.1237", "0.1234", False),
    ("1234.5678", "1234.5679", True),
    ("1000", "1001", False),               # integers (sizes, counts) are exact
    ("1.0000e-03", "1.0001e-03", True),
    ("2.0e-03", "3.0e-03", False),
    ("nan", "nan", True),
    ("nan", "0.5", False),
    ("-3.6621099486211506e-09", "-6.71270206087371e-10", True),   # noise around an exact zero
    ("1.5e-06", "1.8e-06", False),
])
def test_numbers_match(actual, expected, same):
    assert numbers_match(actual, expected) is same


@pytest.mark.parametrize("actual, expected, same", [
    ("tensor([0.1234], grad_fn=<AddBackward0>)", "tensor([0.1235], grad_fn=<AddBackward0>)", True),
    ("tensor([0.1234], grad_fn=<AddBackward0>)", "tensor([0.1234], grad_fn=<AddmmBackward0>)",
     False),
    ("<AddBackward0 object at 0x7f00>", "<AddBackward0 object at 0x7f3a59d21>", True),
    ("torch.Size([3, 784])", "torch.Size([3, 785])", False),
    ("a\nb", "a", False),
    ("a", "a\nb", False),
    ("tensor([1., 2.])", "tensor([1, 2])", False),
])
def test_first_difference(actual, expected, same):
    assert (first_difference(actual, expected) is None) is same
