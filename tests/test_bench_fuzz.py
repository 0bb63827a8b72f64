"""benchmarks/fuzz.py runs end to end at a tiny size: its tables have a row per scene (and
order), it finds no NaN/inf, no thread mismatch and no failed derivative check (exit
status 0), and its options are checked."""

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
SCENES = ("push-T", "box (euler)", "box (implicit)", "box on box (implicit)")


def _run(tmp_path, *args):
    return subprocess.run(
        [sys.executable, str(BENCH / "fuzz.py"), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=subprocess_env(),
    )


def _rows(text, title):
    part = text.split(f"### {title}", 1)[1].split("\n### ", 1)[0]
    return [
        [c.strip() for c in ln.strip().strip("|").split("|")]
        for ln in part.splitlines()
        if ln.startswith("| ") and not ln.startswith("| scene")
    ]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz")
    md = tmp / "fuzz.md"
    out = _run(
        tmp,
        "--states",
        "400",
        "--fd-points",
        "3",
        "--order2",
        "0.05",
        "--seed",
        "1",
        "--out",
        str(md),
    )
    return out, md


def test_runs_clean_and_prints_every_table(tiny):
    out, md = tiny
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert md.read_text().endswith(text)
    cats = _rows(text, "States per category")
    assert [r[0] for r in cats] == list(SCENES)
    counts = _rows(text, "NaN/inf and divergence")
    for scene in SCENES:
        orders = [r for r in counts if r[0] == scene]
        assert [r[1].split()[0] for r in orders] == ["0", "1", "2"]
        for r in orders:
            assert int(r[2]) > 0 and int(r[3]) >= int(r[2])  # states, steps
            assert r[4] == "0" and r[6] == "0"  # no NaN/inf, no non-finite divergence
            assert r[7].endswith("(0)")  # no thread mismatch
    total = [r for r in counts if r[0] == "**all**"][0]
    assert int(total[2]) == 400
    fd = _rows(text, "Derivatives against central differences")
    assert [r[0] for r in fd] == list(SCENES)
    for r in fd:
        # points, skipped; then for the first and the second derivatives the passes at each
        # of the 3 steps, the failures and two worst errors
        points = int(r[1])
        assert points + int(r[2]) == 3 and len(r) == 3 + 2 * 6 + 1
        for first in (3, 9):
            assert sum(int(v) for v in r[first : first + 3]) == points
            assert r[first + 3] == "0"
    assert "Wall time:" in text.splitlines()[-1]


def test_bad_options_are_usage_errors(tmp_path):
    for args in (["--states", "0"], ["--order2", "2"], ["--horizon", "x"]):
        out = _run(tmp_path, *args)
        assert out.returncode == 2 and "usage:" in out.stderr, args
