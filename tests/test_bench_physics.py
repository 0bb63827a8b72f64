"""benchmarks/physics.py: ``--quick`` runs end to end in a subprocess and prints every
table (one per dt, the largest stable dt, push-T at 20 ms, the cost per simulated second,
the thresholds) with every row, each cell a finite number or the documented marker."""

import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

pytest.importorskip("mujoco")

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import physics  # noqa: E402


def _number(cell):
    v = float(cell)
    assert math.isfinite(v), cell
    return v


def _cells(text, label):
    """The cells after the first ``label`` cell of the one row that starts with it."""
    rows = [ln for ln in text.splitlines() if ln.startswith(f"| {label} |")]
    assert len(rows) == 1, (label, rows)
    return [c.strip() for c in rows[0].strip().strip("|").split("|")][1:]


def _section(text, title):
    assert f"\n### {title}\n" in text, title
    return text.split(f"\n### {title}\n", 1)[1].split("\n### ", 1)[0]


@pytest.fixture(scope="module")
def quick_output(tmp_path_factory):
    out = subprocess.run(
        [sys.executable, str(BENCH / "physics.py"), "--quick"],
        cwd=tmp_path_factory.mktemp("physics"),
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_header_names_the_machine(quick_output):
    head = quick_output.splitlines()[2]
    assert head.startswith("softcontact ") and "MuJoCo " in head and "CPUs" in head


def test_one_table_per_dt_with_every_row(quick_output):
    engines = [e.label for e in physics.ENGINES]
    for dt in physics.DTS:
        table = _section(quick_output, f"dt = {dt * 1e3:g} ms")
        assert "| measurement | " + " | ".join(engines) + " |" in table
        for _, label, _ in physics._rows(physics.QUICK):
            cells = _cells(table, label)
            assert len(cells) == len(engines), label
            for c in cells:
                if c != physics.UNSTABLE:
                    _number(c)


def test_largest_stable_dt_table(quick_output):
    table = _section(quick_output, "Largest stable dt")
    for scene in ("box resting", "stack of three"):
        for e in physics.ENGINES:
            rows = [ln for ln in table.splitlines() if ln.startswith(f"| {scene} | {e.label} |")]
            assert len(rows) == 1, (scene, e.label)
            cells = [c.strip() for c in rows[0].strip().strip("|").split("|")][2:]
            assert len(cells) == len(physics.QUICK.grid) + 1
            assert set(cells[:-1]) <= {"ok", physics.UNSTABLE, "moved", "fast"}
            best = cells[-1]
            assert best == "none" or _number(best) * 1e-3 in [
                pytest.approx(g) for g in physics.QUICK.grid
            ]


def test_push_t_and_cost_tables(quick_output):
    table = _section(quick_output, "Push-T at dt = 20 ms (softcontact)")
    for e in physics.SC_ENGINES:
        for where, _, v in physics.PUSH_CASES:
            rows = [
                ln
                for ln in table.splitlines()
                if ln.startswith(f"| {where}, {v:g} m/s | {e.label} |")
            ]
            assert len(rows) == 1
            cells = [c.strip() for c in rows[0].strip().strip("|").split("|")][2:]
            assert len(cells) == 5
            for c in cells:
                if c != physics.UNSTABLE:
                    _number(c)
    table = _section(quick_output, "Cost per simulated second [ms], one thread")
    for scene in ("box on floor", "stack of three", "push-T"):
        for dt in physics.DTS:
            for step in ("value only", "with first derivatives"):
                cells = _cells(table, f"{scene} | {dt * 1e3:g} | {step}")[2:]
                assert len(cells) == 6  # four engines, two ratios
                assert all(_number(c) > 0 for c in cells)


def test_thresholds_are_stated_not_asserted(quick_output):
    table = _section(quick_output, "Thresholds")
    rows = [ln for ln in table.splitlines() if ln.startswith("| ") and "| engine |" not in ln]
    for prefix in (
        "box resting, 10 ms: angular speed after 1 s (< 1e-3 rad/s)",
        "stack of three, 5 ms: stacked after",
        "stack, 5 ms: top box drift after",
        "stack, 5 ms: every speed in the last",
        "creep at 20 deg, mu 0.5, 5 ms (<= 1 mm/s)",
        "stop distance from 1 m/s, 5 ms",
        "torus over peg, 10 ms: stable",
        "push-T, 20 ms: stable, no tunnelling",
    ):
        assert sum(r.startswith(f"| {prefix}") for r in rows) == 2, prefix
    for scene in ("box on floor", "stack", "push-T"):
        for what in ("with first derivatives", "value only"):
            assert sum(f"cost per simulated second, 10 ms, {scene}: {what}" in r for r in rows) == 2
    assert len(rows) == 2 * 8 + 12
    for r in rows:
        assert r.rstrip().endswith(("| yes |", "| **no** |")), r
