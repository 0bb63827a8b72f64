"""The examples in the docstrings run and print what they say (the README's: test_readme.py)."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name",
    [
        "softcontact.ssdf",
        "softcontact.cloud",
        "softcontact.contact",
        "softcontact.scene",
        "softcontact.torch",
        "softcontact.jax",
    ],
)
def test_docstring_examples(name):
    if name in ("softcontact.torch", "softcontact.jax"):
        pytest.importorskip(name.split(".")[1])
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
