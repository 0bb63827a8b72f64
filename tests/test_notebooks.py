"""The notebooks under notebooks/: each ``NN_name.ipynb`` is generated from its jupytext
source ``NN_name.py`` (percent format) and is current, and every notebook executes (they
import only the public API)."""

import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

FOLDER = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
SOURCES = sorted(FOLDER.glob("*.py"))


def test_every_notebook_has_its_source():
    assert NOTEBOOKS, f"no notebooks in {FOLDER}"
    assert [p.stem for p in NOTEBOOKS] == [p.stem for p in SOURCES], (
        "every notebooks/NN_name.py needs its NN_name.ipynb and vice versa: "
        "jupytext --update --to ipynb notebooks/*.py"
    )


@pytest.mark.parametrize("source", SOURCES, ids=[p.name for p in SOURCES])
def test_notebook_is_current(source):
    jupytext = pytest.importorskip("jupytext")
    want = jupytext.read(source)
    got = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    assert [(c.cell_type, c.source) for c in got.cells] == [
        (c.cell_type, c.source) for c in want.cells
    ], (
        f"{source.with_suffix('.ipynb').name} differs from {source.name}: "
        "jupytext --update --to ipynb notebooks/*.py"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"{path.name}: commit notebooks with outputs cleared"
    )
    import softcontact

    monkeypatch.setenv("MPLBACKEND", "Agg")
    # the kernel imports the same softcontact as the tests (installed, or built in place)
    monkeypatch.setenv("PYTHONPATH", str(Path(softcontact.__file__).resolve().parent.parent))
    # run in a scratch folder, so nothing is written into the repository
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    t0 = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - t0
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert elapsed < 60, f"{path.name} took {elapsed:.0f} s (budget 60 s)"
