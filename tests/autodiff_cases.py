"""Shared problems of the autodiff tests: a 2D push in contact and a 3D box on a floor
(test_optimize's), a short horizon, random cotangents and directions."""

import warnings

import numpy as np
import test_optimize as base

import softcontact as sc

T = 3
CASES = ("push-contact", "box3d")


def problem(case):
    """``(model, x0, U (T, nu))``: the case's model, start and first T controls."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.SoftContactWarning)
        prob, U0, _ = base._problem(case, integrator="implicit" if case == "box3d" else "euler")
    return prob.model, prob.x0.copy(), prob._as_U(U0)[:T].copy()


def contact_case():
    """Two spheres overlapping by 4 mm, one turned, both moving: (clouds, poses, vels)."""
    ball = sc.PointCloud.sphere(0.02, 0.004)
    q = np.array([0.9, 0.1, 0.3, 0.2])
    q /= np.linalg.norm(q)
    pa, va = np.array([0, 0, 0, 1.0, 0, 0, 0]), np.array([0.1, 0, 0, 0, 0.2, 0])
    pb, vb = np.array([0.036, 0.005, 0, *q]), np.array([-0.1, 0, 0.1, 0.3, 0, 0])
    return ball, (pa, va, pb, vb)
