"""benchmarks/gym_env.py runs end to end in a subprocess on a one-worker LocalCluster and
prints its table: a row per variant asked for, each cell a number in range, and the
scale-out rows with their success and failed seeds."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

pytest.importorskip("gym_pusht")
pytest.importorskip("dask.distributed")

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "gym_env.py"


def test_gym_benchmark_prints_its_table(tmp_path):
    out = tmp_path / "page.md"
    argv = ["--episodes", "1", "--first-seed", "2", "--workers", "1", "--variants", "ddp,noise"]
    r = subprocess.run(
        [sys.executable, str(SCRIPT), *argv, "--scale", "1", "--own", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    page = out.read_text()
    assert page.startswith("<!-- written by benchmarks/gym_env.py")
    rows = {ln.split("|")[1].strip(): ln for ln in page.splitlines() if ln.startswith("| iLQR")}
    assert set(rows) == {"iLQR (ddp)", "iLQR, noise 1 px / 1 deg"}
    for ln in rows.values():
        cells = [c.strip() for c in ln.split("|")[2:-1]]
        assert cells[0] == "1" and re.fullmatch(r"(0|100)\.0%", cells[1])
        assert 0.0 < float(cells[2]) <= 1.0
        median, p95, worst, wall = (float(c) for c in cells[4:])  # ms, ms, ms, s
        assert 0 <= median <= p95 <= worst and wall > 0
    # scale out: workers, wall, episodes per minute, successes of 1, median steps,
    # decision times and the failed seeds, on 1 and on 2 workers
    for w in (1, 2):
        m = re.search(
            rf"^\| {w} \| \d+ \| [\d.]+ \| ([01]) / 1 \| ([\d.]+|n/a) \| ([\d.]+) \| ([\d.]+) "
            r"\| ([\d.]+) \| (none|\[0\]) \|$",
            page,
            re.M,
        )
        assert m, page
        assert (m.group(1) == "1") == (m.group(6) == "none") == (m.group(2) != "n/a")
        assert 0 < float(m.group(3)) <= float(m.group(4)) <= float(m.group(5))
    own = re.search(r"^\| 2 \| (100\.0|50\.0|0\.0)% \|(.*)\|$", page, re.M)
    assert own and "realtime_settings" in page
    median, p95, worst = (float(c) for c in own.group(2).split("|")[1:])
    assert 0 < median <= p95 <= worst
    with pytest.raises(subprocess.CalledProcessError):
        subprocess.run(
            [sys.executable, str(SCRIPT), "--variants", "bogus"],
            check=True,
            capture_output=True,
            env=subprocess_env(),
            cwd=tmp_path,
        )


def test_failed_seeds_are_listed_without_losing_any():
    """The failed seeds are listed, or the seeds that succeeded when those are fewer."""
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("gym_env_bench", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def eps(ok):
        return [SimpleNamespace(seed=s, success=s in ok) for s in range(500)]

    assert bench._failed(eps(set(range(500)))) == "none"
    assert bench._failed(eps(set(range(500)) - {7, 300})) == "[7, 300]"
    assert bench._failed(eps(set(range(250, 500)))) == str(list(range(250)))
    assert bench._failed(eps({12, 345})) == "all 498 but the 2 that succeeded: [12, 345]"
    assert bench._failed(eps(set())) == "all 500 but the 0 that succeeded: none"
