"""Shared fixtures.  Tests import the *installed* softcontact.

``python -m pytest`` run from the repository root puts the root on sys.path,
where ``softcontact/`` has no compiled ``_core`` unless it was built in place
(``python setup.py build_ext --inplace``).  Without an in-place build the root
is dropped from sys.path so that the installed package is the one tested.
"""

import glob
import os
import re
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not glob.glob(os.path.join(_ROOT, "softcontact", "_core*")):
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _ROOT]
    sys.modules.pop("softcontact", None)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=100)
settings.register_profile("dev", deadline=None, max_examples=30)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def raises_naming(exc, name, call, *more):
    """``call()`` raises ``exc`` whose message names ``name`` as a word (and holds each of
    ``more``); returns the message."""
    with pytest.raises(exc) as info:
        call()
    text = str(info.value)
    assert re.search(rf"(^|\W){re.escape(name)}(\W|$)", text), text
    for m in more:
        assert m in text, text
    return text


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


def subprocess_env():
    """The environment of a test's subprocess: it imports the same softcontact as the tests
    (installed, or built in place) and draws with a non-interactive matplotlib backend."""
    import softcontact

    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(softcontact.__file__)))
    return env


def random_cloud(rng, dim, n, scale=1.0):
    """Random oriented cloud: points in [-scale, scale]^dim, unit normals, weights in [0.5, 2]."""
    import softcontact as sc

    p = rng.uniform(-scale, scale, size=(n, dim))
    nrm = rng.normal(size=(n, dim))
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    w = rng.uniform(0.5, 2.0, size=n)
    return sc.PointCloud(p, nrm, w)


@pytest.fixture
def pyplot():
    """matplotlib.pyplot without a screen (skips where matplotlib is missing); closes every
    figure afterwards."""
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
