"""The examples in the docstrings run and print what they say."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name", ["softcontact.ssdf", "softcontact.cloud", "softcontact.contact", "softcontact.scene"]
)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_readme_example_runs():
    """The README's example block executes (its printed values are asserted here)."""
    import re
    from pathlib import Path

    import numpy as np

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = re.search(r"## Example\s+```python\n(.*?)```", text, re.S).group(1)
    ns: dict = {}
    exec(compile(block, "README.md", "exec"), ns)
    r = ns["r"]
    np.testing.assert_allclose(r.phi, [0.03, -0.02], atol=1e-12)
    np.testing.assert_allclose(r.grad[0], [1.0, 0.0, 0.0], atol=1e-12)
    assert r.hess.shape == (2, 3, 3) and ns["smooth"].d3.shape == (1, 2, 2, 2)
    c = ns["c"]
    assert round(c.wrench_b[2], 1) == 12.1 and c.hessian.shape == (12, 24, 24)
    step = ns["step"]
    assert step.dx_du.shape == (12, 3) and step.d2x_dx2.shape == (12, 12, 12)
