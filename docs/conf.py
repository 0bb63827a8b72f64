"""Sphinx configuration of softcontact's documentation site.

Build it from the repository root (the package must be importable, e.g. installed):

    pip install ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API reference comes from the docstrings (numpydoc), the method notes and benchmark
pages are the Markdown files beside this one, and the notebooks are rendered with their
outputs (executed at build time by myst-nb; `SOFTCONTACT_DOCS_EXECUTE=off` skips that).
"""

import os
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

import softcontact  # noqa: E402

project = "softcontact"
author = "The softcontact developers"
copyright = "the softcontact developers, BSD-3-Clause"  # noqa: A001
release = version = softcontact.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_nb",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "make_figures.py", "conf.py"]
html_theme = "furo"
html_title = f"softcontact {release}"

# numpydoc renders the docstrings' sections; members are listed by the API pages
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
autodoc_typehints = "none"
autodoc_member_order = "bysource"
intersphinx_mapping = {}  # no network at build time: nothing is fetched

myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath", "colon_fence"]
# notebooks run at build time so that the pages show their outputs
nb_execution_mode = os.environ.get("SOFTCONTACT_DOCS_EXECUTE", "force")
nb_execution_timeout = 300
nb_execution_raise_on_error = True
suppress_warnings = ["myst.header"]

# the notebooks live in notebooks/ (their jupytext sources beside them): copied in here
nb_dir = HERE / "notebooks"
nb_dir.mkdir(exist_ok=True)
for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
    shutil.copy2(nb, nb_dir / nb.name)
