"""Warnings torch gives once per process (``TORCH_WARN_ONCE``): the same program of steps runs
in a fresh interpreter under hookgrad and under torch, and each step's warnings (category and
text) must be the same; each once-site stays silent after its first warning, a repeated warning
that torch gives each time still comes each time. A fresh interpreter for both, since torch's
once-state cannot be reset; hookgrad's can (``forget_warned_once``, which every test's fixture
calls), checked here too."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import warnings

import hookgrad
from hookgrad import _warnings

# each step a statement run with ``lib`` bound to the library; the order is the point
STEPS = [
    "lib.cross(lib.ones(3, 3), lib.ones(3, 3))",
    "lib.cross(lib.ones(3, 3), lib.ones(3, 3))",
    "lib.ones(3, 3).cross(lib.ones(3, 3))",
    "lib.cross(lib.ones(3, 4), lib.ones(3, 4), dim=0)",
    "lib.meshgrid(lib.ones(3), lib.ones(2))",
    "lib.meshgrid([lib.ones(3), lib.ones(2)])",
    "lib.meshgrid(lib.ones(3), lib.ones(2), indexing='xy')",
    "lib.ones(3, 2).T",
    "lib.ones(3).T",
    "lib.ones(3, 2, 2).T",
    "lib.ones(3, 2, 2, requires_grad=True).T",
    "lib.tensor(1.0).T",
    "lib.tensor(1.0).T",
    "lib.tensor(1.0).mT",
    "lib.tensor(1.0).mT",
    "lib.tensor(1.0).H",
    "lib.tensor(1.0).mH",
    "lib.tensor(1.0).mH",
    "lib.ones(2, 3).H, lib.ones(4, 2, 3).mH, lib.ones(4, 2, 3).mT",
    "lib.ones(1).var()",
    "lib.ones(1).var()",
    "int(lib.tensor(2.0, requires_grad=True)), lib.tensor(2.0, requires_grad=True).item()",
    "float(lib.tensor(2.0))",
    "float(lib.tensor([2.0], requires_grad=True) * 2)",
    "float(lib.tensor(2.0, requires_grad=True))",
]

SCRIPT = textwrap.dedent("""\
    import re, sys, warnings
    import LIB as lib
    found = []
    for step in STEPS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(step)
        found.append([(r.category.__name__,
                       re.sub(r" \\(Triggered internally at .*\\)$", "", str(r.message),
                              flags=re.S)) for r in caught])
    print(repr(found))
""")


def warnings_per_step(lib: str) -> list:
    script = SCRIPT.replace("LIB", lib).replace("STEPS", repr(STEPS))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return eval(done.stdout)


def test_each_step_warns_as_torch_in_a_fresh_process():
    ours, theirs = warnings_per_step("hookgrad"), warnings_per_step("torch")
    for step, mine, torchs in zip(STEPS, ours, theirs):
        assert mine == torchs, step
    assert sum(map(len, theirs)) >= 7  # the program does exercise the once-sites


def test_forget_warned_once_lets_a_once_warning_fire_again():
    def cross_warnings():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hookgrad.cross(hookgrad.ones(3, 3), hookgrad.ones(3, 3))
        return [str(r.message) for r in caught]
    first = cross_warnings()  # this test's fixture has just forgotten
    assert len(first) == 1 and cross_warnings() == []
    _warnings.forget_warned_once()
    assert cross_warnings() == first


def test_the_0d_T_warning_is_its_own_once_site():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hookgrad.ones(3, 1, 1).T
        hookgrad.tensor(2.0).T
        hookgrad.ones(3).T
    assert [re.match(r"\S+ \S+", str(r.message)).group() for r in caught] == [
        "The use", "Tensor.T is"]
