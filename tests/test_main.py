"""The main job: python -m softcontact."""

import logging
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from conftest import subprocess_env


def test_main_job_runs_and_writes_figure(tmp_path):
    pytest.importorskip("matplotlib")
    out = subprocess.run(
        [sys.executable, "-m", "softcontact", "ssdf", "--grid", "120"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=subprocess_env(),
    )
    assert out.returncode == 0, out.stderr
    assert "eps =" in out.stdout and "pairs/s" in out.stdout
    png = tmp_path / "ssdf_demo.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_main_help_lists_commands():
    out = subprocess.run(
        [sys.executable, "-m", "softcontact", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
        cwd=Path(__file__).parent,
    )
    assert out.returncode == 0
    for cmd in ("demo", "mpc", "compare", "sysid", "bench", "ssdf"):
        assert cmd in out.stdout
    for cmd in ("demo", "mpc", "compare", "sysid", "bench"):
        sub = subprocess.run(
            [sys.executable, "-m", "softcontact", cmd, "--help"],
            capture_output=True,
            text=True,
            timeout=120,
            env=subprocess_env(),
        )
        assert sub.returncode == 0 and "usage: python -m softcontact " + cmd in sub.stdout


def _run(args, cwd, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "softcontact", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=subprocess_env(),
    )


def test_main_job_is_the_push_t_demo(tmp_path):
    """`python -m softcontact` with no arguments: the push-T demo from the fixed seed,
    reaching the goal and writing push_t.png and push_t.gif."""
    pytest.importorskip("matplotlib")
    out = _run([], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "success: coverage 0.9" in out.stdout and "t =" in out.stdout
    assert (tmp_path / "push_t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "push_t.gif").read_bytes()[:6] == b"GIF89a"


def test_cli_subcommands_on_tiny_settings(tmp_path):
    pytest.importorskip("matplotlib")
    out = _run(["demo", "--seed", "14", "--quiet", "--png", "a.png", "--gif", "a.gif"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "success" in out.stdout and "t =" not in out.stdout
    assert (tmp_path / "a.png").exists() and (tmp_path / "a.gif").exists()
    out = _run(
        [
            "mpc",
            "--seeds",
            "2",
            "--first-seed",
            "13",
            "--jobs",
            "1",
            "--time-limit",
            "0.3",
            "--iterations",
            "2",
            "--figure",
            "fail.png",
        ],
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "seed  13" in out.stdout and "seed  14" in out.stdout and "| 2 |" in out.stdout
    # progress: each finished episode's line says how far the run is, with an ETA
    assert "[1/2 episodes, " in out.stdout and "ETA" in out.stdout
    assert re.search(r"\[2/2 episodes, [^\]]*, done\]", out.stdout)
    assert ("Failures" in out.stdout) == (tmp_path / "fail.png").exists()
    out = _run(
        [
            "compare",
            "--seeds",
            "1",
            "--horizon",
            "40",
            "--cem-samples",
            "4",
            "--cem-elites",
            "2",
            "--cem-iterations",
            "2",
            "--lbfgs-iterations",
            "2",
            "--newton-iterations",
            "1",
            "--ilqr-iterations",
            "1",
            "--figure",
            "c.png",
        ],
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("| 1 |") == 4 and (tmp_path / "c.png").exists()
    assert "[4/4 runs, " in out.stdout
    # -v before or after the command: the library's log messages on stderr
    for args in (["-v", "sysid", "--max-nfev", "2"], ["sysid", "-v", "--max-nfev", "2"]):
        out = _run(args, tmp_path)
        assert out.returncode == 0, out.stderr
        assert "mass" in out.stdout and "least-squares evaluations" in out.stdout
        assert "softcontact.tasks.push_t.sysid: steps 1.." in out.stderr
        assert "steps 1.." not in out.stdout
    out = _run(["sysid", "--max-nfev", "2"], tmp_path)
    assert out.returncode == 0 and out.stderr == ""  # silent without -v
    out = _run(["bench", "--repeats", "1"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "step, order 2" in out.stdout and "speed-up" in out.stdout


def test_cli_rejects_bad_options(tmp_path):
    for args, word in (
        (["demo", "--seed", "-1"], "--seed"),
        (["mpc", "--jobs", "0"], "--jobs"),
        (["compare", "--horizon", "50", "--block", "20"], "--block"),
        (["bench", "--repeats", "0"], "--repeats"),
        (["sysid", "--noise", "-1"], "--noise"),
        (["demo", "--seed", "x"], "--seed"),
    ):
        out = _run(args, tmp_path, timeout=120)
        assert out.returncode != 0 and word in out.stderr, (args, out.stderr)


def test_main_from_the_repository_root_after_install():
    """The README's `pip install . && python -m softcontact` runs in the repository root,
    where Python imports the source folder first; it must defer to the installed build."""
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import softcontact, sys; "
            "print(softcontact.ssdf(softcontact.PointCloud.halfspace([0, 0], [0, 1]),"
            " [[0.0, 2.0]], 1e-3).phi[0])",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
    )
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


def test_version_and_console_script(capsys):
    import softcontact
    from softcontact import _version
    from softcontact.__main__ import cli, main

    assert softcontact.__version__ == _version.__version__
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"softcontact {_version.__version__}"
    # the console script is main under its own name
    with mock.patch.object(sys, "argv", ["softcontact", "--help"]):
        with pytest.raises(SystemExit) as exc:
            cli()
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("usage: softcontact")


def test_demo_options_without_the_command(tmp_path, capsys):
    """`python -m softcontact --seed 14 ...`: options alone are the default command's."""
    from softcontact.__main__ import main

    args = ["--seed", "14", "--quiet", "--no-figures", "--time-limit", "0.2"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "push-T seed 14" in out
    assert main(["demo", *args]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == out.splitlines()[:2]
    lib = logging.getLogger("softcontact")
    handlers, level, propagate = list(lib.handlers), lib.level, lib.propagate
    root_handlers = list(logging.getLogger().handlers)
    try:
        assert main(["-v", *args]) == 0  # -v alone before demo's options: still the demo
        captured = capsys.readouterr()
        assert "push-T seed 14" in captured.out
        # only softcontact's loggers are configured: the root logger is untouched
        assert logging.getLogger().handlers == root_handlers
        assert lib.level == logging.INFO and not lib.propagate
    finally:  # -v configured logging for this process: undo it
        for h in set(lib.handlers) - set(handlers):
            lib.removeHandler(h)
        lib.setLevel(level)
        lib.propagate = propagate
    from softcontact.__main__ import _is_verbose

    assert all(map(_is_verbose, ["-v", "-vv", "--verbose", "--verb", "--ve"]))
    assert not any(map(_is_verbose, ["--v", "--version", "-x", "--verbosee", "mpc"]))
    with pytest.raises(SystemExit) as exc:
        main(["--bogus"])  # a usage error of demo's, exit 2
    assert exc.value.code == 2 and "--bogus" in capsys.readouterr().err
