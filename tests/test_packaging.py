"""Packaging metadata: the license, one source for the version, the citation file."""

import re
import sys
from pathlib import Path

import pytest

import softcontact
from softcontact import _version

ROOT = Path(__file__).resolve().parent.parent


def _pyproject():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_license_file_and_spdx_expression():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    project = _pyproject()["project"]
    assert project["license"] == "BSD-3-Clause" and project["license-files"] == ["LICENSE"]
    # an SPDX expression excludes the license classifiers (PEP 639)
    assert not any(c.startswith("License ::") for c in project["classifiers"])


def test_the_version_has_one_source():
    data = _pyproject()
    assert "version" not in data["project"] and data["project"]["dynamic"] == ["version"]
    attr = data["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "softcontact._version.__version__"
    assert softcontact.__version__ == _version.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", _version.__version__)
    assert softcontact.build_info()["version"] == _version.__version__
    # no other file of the package states it
    literal = re.compile(re.escape(f'"{_version.__version__}"'))
    others = [
        p
        for p in (ROOT / "softcontact").rglob("*.py")
        if p.name != "_version.py" and literal.search(p.read_text())
    ]
    assert others == []


def test_console_script_is_declared():
    assert _pyproject()["project"]["scripts"] == {"softcontact": "softcontact.__main__:cli"}


def test_citation_file():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "BSD-3-Clause"
    assert cff["title"].startswith("softcontact") and cff["authors"]
    paper = cff["preferred-citation"]
    assert paper["title"].startswith("A Smooth Analytical Formulation of Collision Detection")
    assert paper["year"] == 2025 and paper["authors"][0]["family-names"] == "Beker"
    assert paper["identifiers"][0]["value"] == "10.48550/arXiv.2503.11736"
    assert "version" not in cff  # the version's one source is softcontact/_version.py


def test_extras_install_what_the_messages_promise():
    """The extras named by softcontact._optional's messages install those packages, and
    the default install holds those of plot, tasks and optimize (the main job needs them);
    gym (the gym-pusht env and Dask) and mesh (trimesh, for mesh files) are optional, and
    the test extra installs them."""
    project = _pyproject()["project"]
    extras = project["optional-dependencies"]

    def names(reqs):
        """Package names, the package's own extras (softcontact[a,b]) expanded."""
        out = set()
        for r in reqs:
            name = r.split(">")[0].split("=")[0].split("[")[0].strip()
            if name == "softcontact":
                for extra in r.split("[")[1].rstrip("]").split(","):
                    out |= names(extras[extra.strip()])
            else:
                out.add(name)
        return out

    assert names(extras["plot"]) == {"matplotlib"}
    assert names(extras["tasks"]) == {"shapely", "scipy"}
    assert names(extras["optimize"]) == {"scipy"}
    assert names(extras["gym"]) == {"shapely", "scipy", "gym-pusht", "dask"}
    assert names(extras["mesh"]) == {"trimesh"}
    assert names(extras["mujoco"]) == {"mujoco"}
    assert names(extras["torch"]) == {"torch"}
    assert names(extras["jax"]) == {"jax"}
    main_job = names(extras["plot"] + extras["tasks"] + extras["optimize"])
    assert names(extras["all"]) == main_job | names(extras["gym"]) | {
        "trimesh",
        "mujoco",
        "torch",
        "jax",
    }
    assert names(project["dependencies"]) >= main_job | {"numpy"}
    assert "trimesh" not in names(project["dependencies"])
    assert names(extras["test"]) >= names(extras["gym"]) | names(extras["mesh"])


def test_every_subpackage_is_installed():
    """pyproject's explicit package list names every folder of the package that has an
    __init__.py (a folder left out would be missing from installs and wheels)."""
    root = Path(__file__).resolve().parent.parent
    found = {
        ".".join(p.parent.relative_to(root).parts)
        for p in (root / "softcontact").rglob("__init__.py")
    }
    assert set(_pyproject()["tool"]["setuptools"]["packages"]) == found
