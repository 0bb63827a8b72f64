"""The main job: python -m softcontact."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import softcontact


def _env():
    # the subprocess imports the same softcontact as the tests (installed, or built in place)
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = str(Path(softcontact.__file__).resolve().parent.parent)
    return env


def test_main_job_runs_and_writes_figure(tmp_path):
    pytest.importorskip("matplotlib")
    out = subprocess.run([sys.executable, "-m", "softcontact", "--grid", "120"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, env=_env())
    assert out.returncode == 0, out.stderr
    assert "eps =" in out.stdout and "pairs/s" in out.stdout
    png = tmp_path / "ssdf_demo.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_main_help_lists_commands():
    out = subprocess.run([sys.executable, "-m", "softcontact", "--help"], capture_output=True,
                         text=True, timeout=120, env=_env(), cwd=Path(__file__).parent)
    assert out.returncode == 0
    assert "ssdf" in out.stdout


def test_main_from_the_repository_root_after_install():
    """The README's `pip install . && python -m softcontact` runs in the repository root,
    where Python imports the source folder first; it must defer to the installed build."""
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", "import softcontact, sys; "
                          "print(softcontact.ssdf(softcontact.PointCloud.halfspace([0, 0], [0, 1]),"
                          " [[0.0, 2.0]], 1e-3).phi[0])"],
                         cwd=root, capture_output=True, text=True, timeout=120, env=_env())
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == 2.0


def test_main_in_process(tmp_path, capsys):
    from softcontact.__main__ import main

    assert main(["ssdf", "--grid", "40", "--no-figure"]) == 0
    text = capsys.readouterr().out
    assert text.count("eps =") == 3
    # the demo's own gradient check: |grad - FD| printed for each eps, all small
    errs = [float(line.rsplit("<=", 1)[1]) for line in text.splitlines() if "FD" in line]
    assert len(errs) == 3 and max(errs) < 1e-5
