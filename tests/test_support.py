"""The README's supported-API table is generated from hookgrad._support and is current; every
name it calls supported exists in hookgrad, and every name it calls missing is really missing."""
from pathlib import Path

import pytest

from hookgrad import _support

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_table_is_the_generated_one():
    text = README.read_text()
    assert _support.replace_table(text) == text, (
        "README's table is stale: run `python -m hookgrad._support --write README.md`")


@pytest.mark.parametrize("row", _support.ROWS, ids=lambda r: r.area)
def test_listed_names_exist_exactly_when_supported(row):
    for name in row.names:
        assert _support.resolves(name) == row.supported, name
