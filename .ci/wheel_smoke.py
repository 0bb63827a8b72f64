"""Smoke test of an installed wheel (CI and cibuildwheel): run from outside the source tree.

Checks that the compiled core imports and is a stripped release build, that a 3D step's
first derivatives match central finite differences, and that the command line answers.
"""

import os
import subprocess
import sys

import numpy as np

import softcontact as sc

here = os.path.dirname(os.path.abspath(sc.__file__))
assert not os.path.exists(os.path.join(here, "..", "csrc")), "imported the source tree"
info = sc.build_info()
core = sc._core.__file__
size = os.path.getsize(core)
print(
    f"softcontact {info['version']} from {here}: core {size / 1e6:.1f} MB, "
    f"ISAs {', '.join(info['isa_supported'])} (default {info['isa_default']})"
)
assert size < 5e6, f"the compiled core is {size / 1e6:.1f} MB: not stripped?"

scene = sc.Scene(dim=3)
scene.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
scene.add_body(
    sc.PointCloud.box([0.05] * 3, 0.01), mass=1.0, pose=[0, 0, 0.049, 1, 0, 0, 0], name="box"
)
scene.add_contact("box", "floor")
model = scene.build(dt=0.005, integrator="implicit")
x = model.initial_state()
x[7:10] = [0.1, -0.05, 0.02]
s = model.step(x, order=1)
h = 1e-6
fd = np.empty_like(s.dx_dx)
for j in range(2 * model.nv):
    dx = np.zeros(2 * model.nv)
    dx[j] = h
    xp = model.step(model.retract(x, dx), order=0).x_next
    xm = model.step(model.retract(x, -dx), order=0).x_next
    fd[:, j] = model.difference(xp, xm) / (2 * h)
err = np.abs(fd - s.dx_dx).max() / max(1.0, np.abs(s.dx_dx).max())
print(f"3D step: first derivatives against central differences, relative error {err:.1e}")
assert err < 1e-6, err

for args in (["--version"], ["ssdf", "--grid", "30", "--no-figure"]):
    out = subprocess.run(
        [sys.executable, "-m", "softcontact", *args], capture_output=True, text=True, check=True
    )
    print(out.stdout.strip().splitlines()[0])
print("wheel smoke test passed")
