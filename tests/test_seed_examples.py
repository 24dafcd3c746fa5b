"""The examples of the documents hookgrad was specified from run under hookgrad, with only the
import changed, and do what they do under torch.

The documents are not part of the repository: they are read at test time from ``../shared/seeds/``
beside the repository root (``HOOKGRAD_SEED_DIR`` points elsewhere). Where they are absent these
tests skip and say so. ``_seed_examples.program`` pulls each page's example code out of its text.

- A page documenting torch: its code runs under hookgrad and under torch, and both print the same.
  Names the page uses without defining (a ``net`` with a ``layer1``, its ``input``, a ``loss``, the
  ``Function`` base class) come from a short preamble of ours; afterwards an epilogue of ours prints
  every tensor the page left behind and differentiates the results it did not, and runs the page's
  module backward hook once more, registered before the forward pass so that it fires.
- A page documenting Paddle: its code runs under ``hookgrad.compat.paddle``; the same code with
  Paddle's names spelled in torch runs under torch; what their hooks received and the gradients
  must agree.
"""
from __future__ import annotations

import builtins
import os
import re
from pathlib import Path

import numpy as np
import pytest
from _script_output import first_difference, run_source
from _seed_examples import Program, program

ROOT = Path(__file__).resolve().parent.parent
SEED_DIR = Path(os.environ.get("HOOKGRAD_SEED_DIR", ROOT.parent / "shared" / "seeds"))
SEED_FILES = sorted(SEED_DIR.glob("*.txt")) if SEED_DIR.is_dir() else []
MISSING = f"the seed documents are not here ({SEED_DIR} is absent); their examples are not run"


def _programs() -> list[tuple[str, Program]]:
    found = []
    for path in SEED_FILES:
        extracted = program(path.read_text(encoding="utf-8"))
        if extracted is not None:
            found.append((path.name, extracted))
    return found


PROGRAMS = _programs()
TORCH_PAGES = [(name, p) for name, p in PROGRAMS if p.library == "torch"] or [(None, None)]
PADDLE_PAGES = [(name, p) for name, p in PROGRAMS if p.library == "paddle"] or [(None, None)]


def _need_seeds(name):
    if name is None:
        pytest.skip(MISSING)


PREAMBLE_IMPORTS = """\
import hookgrad as torch
from hookgrad import nn
from hookgrad.autograd import Function
"""

PREAMBLE_NET = """\
class _PageNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(4, 3)
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        return self.head(self.layer1(x).tanh())


net = _PageNet()
with torch.no_grad():
    for _number, _param in enumerate(net.parameters()):
        _values = torch.linspace(-0.5, 0.5, _param.numel()).reshape(_param.shape)
        _param.copy_(_values * (_number + 1))
input = torch.linspace(-1, 1, 8).reshape(2, 4).requires_grad_()
loss = net(input).sum()
"""

EPILOGUE = """\
_leaves = [v for k, v in sorted(globals().items()) if isinstance(v, torch.Tensor)
           and not k.startswith("_") and v.is_leaf and v.requires_grad]
for _name, _value in sorted(globals().items()):
    if _name.startswith("_") or not isinstance(_value, torch.Tensor):
        continue
    print(_name, _value, "grad:", _value.grad if _value.is_leaf else "(not a leaf)")
    if _value.grad_fn is not None:
        try:
            print("  d/d leaves:", torch.autograd.grad(_value.sum(), _leaves, allow_unused=True,
                                                       retain_graph=True))
        except RuntimeError as _error:
            print("  ", type(_error).__name__, _error)
if "backward_hook" in globals() and "net" in globals():
    net.zero_grad()
    input.grad = None
    _handle = net.layer1.register_backward_hook(backward_hook)
    net(input).sum().backward()
    _handle.remove()
    print("after the page's backward hook:", net.layer1.weight.grad, net.layer1.bias.grad,
          input.grad, [g.shape for g in gouts])
"""


def _whole_program(page: Program, epilogue: str = EPILOGUE) -> str:
    uses_net = re.search(r"\bnet\b", page.code) and not re.search(r"^net\s*=", page.code, re.M)
    return PREAMBLE_IMPORTS + (PREAMBLE_NET if uses_net else "") + page.code + "\n" + epilogue


def test_the_seed_pages_yield_their_examples():
    if not SEED_FILES:
        pytest.skip(MISSING)
    assert len(PROGRAMS) >= 4, [name for name, _ in PROGRAMS]
    assert {p.library for _, p in PROGRAMS} == {"torch", "paddle"}


@pytest.mark.filterwarnings("ignore:Using a non-full backward hook:FutureWarning")
@pytest.mark.parametrize("name, page", TORCH_PAGES, ids=[n or "missing" for n, _ in TORCH_PAGES])
def test_torch_page_prints_under_hookgrad_what_it_prints_under_torch(name, page):
    _need_seeds(name)
    source = _whole_program(page)
    expected = run_source(source, "torch", name)
    actual = run_source(source, "hookgrad", name)
    difference = first_difference(actual, expected)
    assert difference is None, f"{name}: {difference}\n--- program:\n{source}"


# -- Paddle's page ------------------------------------------------------------------------------
_PADDLE_TO_TORCH = [  # Paddle's spelling -> torch's, enough for the page's examples
    (r"import hookgrad\.compat\.paddle as paddle", "import torch"),
    (r"from hookgrad\.compat\.paddle\.autograd import PyLayer",
     "from torch.autograd import Function as PyLayer"),
    (r"paddle\.autograd\.saved_tensors_hooks", "torch.autograd.graph.saved_tensors_hooks"),
    (r"paddle\.multiply", "torch.mul"),
    (r"paddle\.to_tensor", "torch.from_numpy"),
    (r"paddle\.ones\(\[(.*?)\]\)", r"torch.ones(\1)"),
    (r"(\w+)\.stop_gradient = False", r"\1.requires_grad_(True)"),
    (r"ctx\.saved_tensor\(\)", "ctx.saved_tensors"),
    (r"return x\.numpy\(\)", "return x.detach().numpy()"),
]


def _as_numpy(value):
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):
        return np.array(value.detach().numpy())
    return value


def _run_recording(source: str) -> tuple[list, dict]:
    """Run ``source``; return what it printed (tensors as arrays) and its final namespace."""
    printed = []

    def record(*args, **kwargs):
        printed.append(tuple(_as_numpy(a) for a in args))

    namespace = {"__name__": "__main__", "print": record, "__builtins__": builtins}
    exec(compile(source, "<page>", "exec"), namespace)  # noqa: S102
    return printed, namespace


@pytest.mark.parametrize("name, page", PADDLE_PAGES,
                         ids=[n or "missing" for n, _ in PADDLE_PAGES])
def test_paddle_page_does_under_hookgrad_what_torch_does(name, page):
    _need_seeds(name)
    in_torch = page.code
    for pattern, replacement in _PADDLE_TO_TORCH:
        in_torch = re.sub(pattern, replacement, in_torch)
    assert "paddle" not in in_torch, in_torch
    ours, our_names = _run_recording(page.code)
    theirs, their_names = _run_recording(in_torch)
    assert [args[0] for args in ours] == [args[0] for args in theirs]
    assert sum(args[0] == "Packing" for args in ours) >= 2
    for mine, reference in zip(ours, theirs):
        np.testing.assert_array_equal(mine[1], reference[1])
    for tensor in ("a", "b"):
        np.testing.assert_array_equal(_as_numpy(our_names[tensor].grad),
                                      _as_numpy(their_names[tensor].grad))
