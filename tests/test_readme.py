"""The README's examples run as written."""

import re
from pathlib import Path

import pytest

import mdarray
from mdarray.__main__ import main

README = Path(__file__).resolve().parent.parent / "README.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)


@pytest.mark.skipif(
    len(mdarray.devices()) < 2,
    reason="the README's examples place chunks on devices 0 and 1; this backend has one device",
)
@pytest.mark.parametrize("code", EXAMPLES)
def test_readme_example_runs(code, capsys):
    exec(compile(code, str(README), "exec"), {})
    assert capsys.readouterr().out


def test_demo_runs(capsys):
    main()
    out = capsys.readouterr().out
    assert out.count("matches NumPy: True") == 2
