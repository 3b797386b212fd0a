"""The API reference lists exactly the public names."""

import re
from pathlib import Path

import mdarray

API = Path(__file__).resolve().parent.parent / "docs" / "api.rst"


def test_api_reference_lists_exactly_all():
    text = API.read_text()
    documented = re.findall(r"^   (?:\* ``)?([A-Za-z_]\w*)(?:``)?\s*$", text, re.MULTILINE)
    assert len(documented) == len(set(documented)), "a name is listed twice"
    assert set(documented) == set(mdarray.__all__)
