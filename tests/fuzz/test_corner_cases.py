"""The hand-picked corner probe agrees with torch on every case but the listed ones."""
from tests.fuzz import corner_cases


def test_every_corner_case_agrees_with_torch_or_is_a_known_difference():
    cases = corner_cases.all_cases()
    found = corner_cases.run(cases)
    assert len(cases) > 3000
    unexpected = [(name, reason) for name, reason in found if name not in corner_cases.KNOWN]
    assert not unexpected, unexpected[:10]


def test_known_differences_are_still_cases():
    assert set(corner_cases.KNOWN) <= set(corner_cases.all_cases())
