"""The README's code blocks run and print what the README says they print.

Each ``python`` block is executed on its own (a fresh namespace, matplotlib without a
screen); where a ``text`` block follows it, that block is exactly what it prints.
"""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def _examples():
    blocks = [(m.group(1), m.group(2)) for m in BLOCK.finditer(README.read_text())]
    out = []
    for i, (lang, code) in enumerate(blocks):
        if lang != "python":
            continue
        expected = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" else None
        out.append(pytest.param(code, expected, id=f"block{i}"))
    return out


def test_readme_has_the_quickstarts():
    text = README.read_text()
    assert "pip install . && python -m softcontact" in text
    assert 'pip install ".[test]" && python -m pytest' in text
    assert len(text.splitlines()) <= 250
    assert len(_examples()) >= 2 and all(p.values[1] is not None for p in _examples())


@pytest.mark.parametrize("code, expected", _examples())
def test_readme_block_prints_what_it_says(code, expected):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    finally:
        plt.close("all")
    if expected is not None:
        assert buf.getvalue() == expected
