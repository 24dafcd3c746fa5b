"""A fixed range of fuzzed programs must run alike under hookgrad and torch.

Programs are checked in batches (one test per batch of seeds), so the 2,000 programs cost a
few dozen test items, not thousands. A failure shows each mismatching program shrunk and
printed, ready to paste after ``tests/fuzz/prelude.py``'s helpers. ``make fuzz`` runs many more.
"""
import pytest

from fuzz.interpreter import check
from fuzz.programs import generate
from fuzz.shrink import report, shrink

PROGRAMS = 2000
BATCH = 100


@pytest.mark.parametrize("first", range(0, PROGRAMS, BATCH))
def test_programs_match_torch(first):
    failures = []
    for seed in range(first, first + BATCH):
        if check(generate(seed)):
            failures.append(report(*shrink(generate(seed), budget=150)))
    assert not failures, "\n".join(failures)


def test_a_mismatch_is_found_and_shrunk():
    """The comparison can fail: a program whose line differs between the libraries on purpose
    (an attribute only torch has) is reported, and shrinking keeps only what is needed."""
    program = generate(3)
    extra = {"code": "t999 = torch.__name__",
             "ins": [], "outs": ["t999"], "show": ["t999"]}
    program = {**program, "lines": program["lines"] + [extra]}
    found = check(program)
    assert found and "t999" in found
    small, reason = shrink(program)
    assert [line["code"] for line in small["lines"]] == [extra["code"]]
    assert "t999" in reason


def test_generator_is_deterministic_and_covers_the_features():
    assert generate(11) == generate(11)
    text = "\n".join(line["code"] for seed in range(300) for line in generate(seed)["lines"])
    for feature in ("SquareOnce.apply", "WithCount.apply", "Lazy.apply", "WithMask.apply",
                    "DoubleInPlace.apply", "register_hook(tensor_hook", "retain_grad()",
                    "register_post_accumulate_grad_hook", "grad_fn.register_hook",
                    "grad_fn.register_prehook", "register_full_backward_hook",
                    "register_forward_pre_hook", "saved_tensors_hooks(pack_copy",
                    "create_graph=True", "allow_unused=True", "inputs=[", ".detach()",
                    ".unbind(", ".split(", ".expand(", ".diagonal()", ".narrow(", ".mul_(",
                    ".copy_(", ".zero_()", "] = ", "torch.float32"):
        assert feature in text, feature
