"""Bitwise regression fixture of the compiled core: every kernel's outputs on a fixed set of
cases, as SHA-256 digests of their bytes (``tests/data/same_bits.json``).

The cases cover the SSDF at orders 0-3 (near, far and very far queries; 2D and 3D; clouds
with and without a spatial index, and a half-space), the separation field and the contact
model at several gaps and orders 0-2 (with and without friction), and ``Model.step`` of
the push-T, box-on-floor and two-tori scenes at orders 0-2 (with parameter derivatives;
push-T and the box also with the implicit integrator),
plus rollouts, inverse dynamics and energies: each dense and pruned, with every
instruction set this CPU supports.  A change to the C core that is meant to keep results
(a refactor, a faster loop) must keep every digest; ``tests/test_same_bits.py`` checks.

Digests are recorded per platform (:func:`platform_tag`): the operating system, the CPU
architecture and C library (whose ``exp`` and ``log`` round as they do), and the widest
SIMD that NumPy dispatches its own ``sin``/``cos`` to, which the cloud samplers use (AVX-512
and AVX2 machines sample a sphere differently in the last bits).  The test checks the
record of the platform it runs on and skips where there is none; ``--write`` records (or
replaces) this platform's entry and keeps the others.

Usage::

    python tests/same_bits.py --write            # record the fixture (deliberate changes)
    python tests/same_bits.py --dump out.npz     # save every output, for diagnosis
    python tests/same_bits.py --compare out.npz  # largest differences against a dump
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import sys
from pathlib import Path

import numpy as np

import softcontact as sc

FIXTURE = Path(__file__).with_name("data") / "same_bits.json"


def fixture() -> dict:
    """The recorded digests: ``{platform tag: {case name: digest}}``."""
    return json.loads(FIXTURE.read_text())["platforms"] if FIXTURE.exists() else {}


ISAS = ("generic", "avx2", "avx512")


def numpy_simd() -> str:
    """The widest x86 SIMD level NumPy dispatches to on this CPU: ``"avx512"``,
    ``"avx2"`` or ``"baseline"`` (other architectures)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    if feats.get("AVX512F") or feats.get("AVX512_SKX") or feats.get("X86_V4"):
        return "avx512"
    return "avx2" if feats.get("AVX2") else "baseline"


def platform_tag() -> str:
    """The platform whose rounding the digests record."""
    libc = "-".join(platform.libc_ver())
    return f"{platform.system()}-{platform.machine()}-{libc or 'unknown'}-numpy_{numpy_simd()}"


def digest(a) -> str:
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    h = hashlib.sha256()
    h.update(repr(a.shape).encode())
    h.update(a.tobytes())
    return h.hexdigest()[:20]


# ------------------------------------------------------------------------------------------
# inputs
# ------------------------------------------------------------------------------------------
def _rng(seed):
    return np.random.default_rng(seed)


def clouds():
    """Name -> (cloud, eps): small (query-lane kernel), indexed (>= 256 samples), a mesh
    and a half-space, in 2D and 3D."""
    verts = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    return {
        "disk": (sc.PointCloud.disk(0.05, 0.01), 1e-4),
        "t2d": (sc.PointCloud.t_shape(spacing=0.002), 4e-6),
        "poly": (sc.PointCloud.polygon([[0, 0], [0.3, 0], [0.3, 0.1], [0, 0.2]], 0.001), 1e-5),
        "half2": (sc.PointCloud.halfspace([0.0, 0.01], [0.0, 1.0]), 1e-4),
        "sphere": (sc.PointCloud.sphere(0.04, 0.012), 5e-5),
        "box": (sc.PointCloud.box([0.05, 0.03, 0.02], 0.005), 1e-5),
        "tet": (sc.PointCloud.from_mesh(verts * 0.1, faces, 0.01), 3e-5),
        "half3": (sc.PointCloud.halfspace([0.0, 0.0, -0.01], [0.0, 0.6, 0.8]), 1e-4),
    }


def queries(cloud, where, seed):
    """37 queries (an odd count: partial vector groups) near the surface, far (5-10 radii
    from the centre) or very far (~1e4 radii)."""
    rng = _rng(seed)
    D = cloud.dim
    lo, hi = cloud.bounds
    c = 0.5 * (lo + hi)
    r = max(float(np.linalg.norm(hi - lo)) / 2, 0.01)
    if where == "near":
        k = rng.integers(0, len(cloud), 37)
        return (
            cloud.points[k]
            + rng.normal(scale=0.2 * r / max(len(cloud), 1) ** (1 / D), size=(37, D))
            + 0.003 * cloud.normals[k]
        )
    u = rng.normal(size=(37, D))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    dist = rng.uniform(5, 10, size=(37, 1)) * r if where == "far" else 1e4 * r
    return c + dist * u


def pairs():
    """(name, cloud_a, pose_a, vel_a, cloud_b, pose_b, vel_b, params) at several gaps."""
    out = []
    disk = sc.PointCloud.disk(0.02, 0.002)
    t2 = sc.PointCloud.t_shape(spacing=0.003)
    half2 = sc.PointCloud.halfspace([0.0, 0.0], [0.0, 1.0])
    for gap in (-0.004, -0.001, 0.0005, 0.003, 0.02):
        out.append(
            (
                f"disks_gap{gap:g}",
                disk,
                [0.0, 0.0, 0.1],
                [0.02, -0.01, 0.5],
                disk,
                [0.04 + gap, 0.003, -0.2],
                [-0.03, 0.01, -0.3],
                None,
            )
        )
    for gap in (-0.002, 0.001, 0.05):
        out.append(
            (
                f"t_disk_gap{gap:g}",
                t2,
                [0.01, 0.02, 0.3],
                [0.0, 0.01, 0.2],
                disk,
                [0.01, 0.02 - 0.075 - 0.02 - gap, 0.0],
                [0.0, 0.1, 0.0],
                sc.ContactParams(friction=0.4, damping=5.0),
            )
        )
    out.append(
        (
            "disk_half_touch",
            disk,
            [0.1, 0.019, 0.2],
            [0.1, -0.02, 1.0],
            half2,
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
            sc.ContactParams(friction=0.0),
        )
    )
    out.append(
        (
            "disk_half_far",
            disk,
            [0.1, 0.2, 0.2],
            [0.1, -0.02, 1.0],
            half2,
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
            None,
        )
    )
    box = sc.PointCloud.box([0.05, 0.05, 0.05], 0.1 / 6)
    floor = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    s = math.sqrt(0.5)
    q = [math.cos(0.1), 0.0, math.sin(0.1) * s, math.sin(0.1) * s]
    for gap in (-0.004, 0.002, 0.1):
        out.append(
            (
                f"box_floor_gap{gap:g}",
                box,
                [0.0, 0.0, 0.05 + gap, *q],
                [0.05, 0.0, -0.01, 0.0, 0.2, 0.1],
                floor,
                [0.0, 0.0, 0.0, 1, 0, 0, 0],
                [0.0] * 6,
                sc.ContactParams(damping=20.0),
            )
        )
    sph = sc.PointCloud.sphere(0.03, 0.006)
    for gap in (-0.003, 0.001, 0.02):
        out.append(
            (
                f"box_sphere_gap{gap:g}",
                box,
                [0.0, 0.0, 0.0, *q],
                [0.0, 0.01, 0.0, 0.1, 0.0, -0.2],
                sph,
                [0.0, 0.02, 0.08 + gap, 1, 0, 0, 0],
                [0.01, 0.0, -0.05, 0.0, 0.3, 0.0],
                sc.ContactParams(eps=2e-5, friction=0.6, damping=10.0),
            )
        )
    return out


def scenes():
    """Name -> (model, x, u) of the three benchmark scenes, in contact, and of the push-T
    and box scenes built with ``integrator="implicit"``."""
    from softcontact.tasks import push_t

    task = push_t.make(3, integrator="euler", damping=8.0)
    push_scene = task.scene
    x = np.array(task.x0, dtype=float)
    th = x[2]
    R = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    r = float(task.pusher_radius)
    stem_bottom = float(np.asarray(task.vertices)[:, 1].min())
    x[3:5] = x[0:2] + R @ np.array([0.0, stem_bottom - r + 0.001])
    x[5] = 0.0
    vel = R @ np.array([0.0, 0.1])
    u = np.array([vel[0], vel[1], 0.3])
    x[6:9] = [0.01, -0.02, 0.1]
    x[9:12] = u
    out = {"push_t": (task.model, x, u)}
    out["push_t_implicit"] = (push_scene.build(task.model.dt, "implicit"), x, u)

    box = sc.PointCloud.box([0.05, 0.05, 0.05], 0.1 / 6)
    floor = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    scene = sc.Scene(dim=3)
    scene.add_body(floor, kind="static", name="floor")
    scene.add_body(
        box,
        mass=1.0,
        pose=[0.0, 0.0, 0.046, 1.0, 0.0, 0.0, 0.0],
        velocity=[0.05, 0.0, -0.01, 0.0, 0.2, 0.1],
        name="box",
    )
    scene.add_contact("box", "floor", sc.ContactParams())
    model = scene.build(0.001)
    out["box"] = (model, model.initial_state(), None)
    out["box_implicit"] = (scene.build(0.01, "implicit"), model.initial_state(), None)

    # two interlocked tori (benchmarks/scenes.py, two_tori)
    R_, r_, nM, nm = 0.05, 0.015, 12, 8
    ang_M = 2 * np.pi * np.arange(nM) / nM
    ang_m = 2 * np.pi * np.arange(nm) / nm
    verts = np.array(
        [
            [
                (R_ + r_ * math.cos(b)) * math.cos(a),
                (R_ + r_ * math.cos(b)) * math.sin(a),
                r_ * math.sin(b),
            ]
            for a in ang_M
            for b in ang_m
        ]
    )
    faces = []
    for i in range(nM):
        for j in range(nm):
            a0, a1 = i * nm + j, ((i + 1) % nM) * nm + j
            b0, b1 = i * nm + (j + 1) % nm, ((i + 1) % nM) * nm + (j + 1) % nm
            faces += [[a0, a1, b1], [a0, b1, b0]]
    cloud = sc.PointCloud.from_mesh(verts, np.array(faces), spacing=1.0)
    s = math.sqrt(0.5)
    scene = sc.Scene(dim=3)
    scene.add_body(cloud, kind="static", name="ring_a")
    scene.add_body(
        cloud,
        pose=[R_, 0.0, 2 * r_ - R_ + 0.0015, s, s, 0.0, 0.0],
        velocity=[0, 0, 0, 0.0, 0.0, -0.3],
        name="ring_b",
    )
    scene.add_contact("ring_b", "ring_a", sc.ContactParams(eps=4e-5))
    model = scene.build(0.002)
    out["tori"] = (model, model.initial_state(), None)
    return out


# ------------------------------------------------------------------------------------------
# cases
# ------------------------------------------------------------------------------------------
def _variants():
    """(isa, dense) of every supported instruction set, pruned and dense."""
    supported = sc.build_info()["isa_supported"]
    return [(isa, dense) for isa in ISAS if isa in supported for dense in (False, True)]


def _tag(isa, dense):
    return f"{isa}{'-dense' if dense else ''}"


def cases():
    """Yield (name, function returning {output name: array})."""
    variants = _variants()
    for ci, (cname, (cloud, eps)) in enumerate(sorted(clouds().items())):
        for wi, where in enumerate(("near", "far", "veryfar")):
            x = queries(cloud, where, 100 * ci + wi)
            for order in range(4):
                for isa, dense in variants:

                    def run(cloud=cloud, x=x, eps=eps, order=order, isa=isa, dense=dense):
                        r = sc.ssdf(cloud, x, eps, order=order, num_threads=1, isa=isa, dense=dense)
                        return {k: v for k, v in r._asdict().items() if v is not None}

                    yield f"ssdf/{cname}/{where}/o{order}/{_tag(isa, dense)}", run
    for name, ca, qa, va, cb, qb, vb, prm in pairs():
        eps = (prm or sc.ContactParams()).eps
        for order in range(3):
            for isa, dense in variants:

                def sep(ca=ca, qa=qa, cb=cb, qb=qb, eps=eps, order=order, isa=isa, dense=dense):
                    r = sc.separation(
                        ca, qa, cb, qb, eps, order=order, num_threads=1, isa=isa, dense=dense
                    )
                    return {k: v for k, v in r._asdict().items() if v is not None}

                def con(
                    ca=ca,
                    qa=qa,
                    va=va,
                    cb=cb,
                    qb=qb,
                    vb=vb,
                    prm=prm,
                    order=order,
                    isa=isa,
                    dense=dense,
                ):
                    r = sc.contact(
                        ca,
                        qa,
                        va,
                        cb,
                        qb,
                        vb,
                        prm,
                        order=order,
                        num_threads=1,
                        isa=isa,
                        dense=dense,
                    )
                    return {k: v for k, v in r._asdict().items() if v is not None}

                yield f"separation/{name}/o{order}/{_tag(isa, dense)}", sep
                yield f"contact/{name}/o{order}/{_tag(isa, dense)}", con
    for sname, (model, x, u) in scenes().items():
        for isa, dense in variants:
            for order in range(3):
                for params in (False, True):
                    if params and order != 1:
                        continue

                    def step(
                        model=model, x=x, u=u, order=order, params=params, isa=isa, dense=dense
                    ):
                        r = model.step(
                            x, u, order=order, params=params, num_threads=1, isa=isa, dense=dense
                        )
                        return {k: v for k, v in r._asdict().items() if v is not None}

                    yield (
                        (f"step/{sname}/o{order}{'-params' if params else ''}/{_tag(isa, dense)}"),
                        step,
                    )

            def roll(model=model, x=x, u=u, isa=isa, dense=dense):
                T = 4
                U = np.zeros((2, T, model.nu))
                if model.nu:
                    U[:] = u
                    U[1] *= 0.5
                x0 = np.stack([x, x])
                x0[1, 0] += 1e-3
                out = {}
                for order in (0, 1):
                    r = model.rollout(x0, U, order=order, num_threads=2, isa=isa, dense=dense)
                    out[f"states_o{order}"] = r.states
                    if order:
                        out["dx_dx"] = r.dx_dx
                        out["dx_du"] = r.dx_du
                return out

            def misc(model=model, x=x, u=u, isa=isa, dense=dense):
                xn = model.step(x, u, isa=isa, dense=dense).x_next
                uu, f = model.inverse_dynamics(x, xn, num_threads=1, isa=isa, dense=dense)
                e = model.energy(x, num_threads=1, isa=isa, dense=dense)
                return {
                    "u": uu,
                    "f": f,
                    "energy": np.array(e[:3]),
                    "momentum": np.concatenate([np.ravel(v) for v in model.momentum(x)]),
                }

            yield f"rollout/{sname}/{_tag(isa, dense)}", roll
            yield f"model/{sname}/{_tag(isa, dense)}", misc


def compute(pattern=None):
    """{case: {output: array}} of every case (whose name contains ``pattern``)."""
    out = {}
    for name, fn in cases():
        if pattern is None or pattern in name:
            out[name] = {k: np.asarray(v, dtype=np.float64) for k, v in fn().items()}
    return out


def digests(results):
    return {case: {k: digest(v) for k, v in sorted(outs.items())} for case, outs in results.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--write", action="store_true", help="record this platform in tests/data/same_bits.json"
    )
    ap.add_argument("--dump", metavar="NPZ", help="save every output to this file")
    ap.add_argument("--compare", metavar="NPZ", help="largest differences against a dump")
    ap.add_argument("-k", dest="pattern", help="only the cases whose name contains this")
    args = ap.parse_args(argv)
    results = compute(args.pattern)
    if args.write:
        FIXTURE.parent.mkdir(exist_ok=True)
        recorded = fixture()
        new = digests(results)
        if args.pattern:  # a subset: the other cases of this platform's record stay
            new = {**recorded.get(platform_tag(), {}), **new}
        platforms = {**recorded, platform_tag(): new}
        FIXTURE.write_text(json.dumps({"platforms": platforms}, indent=0, sort_keys=True) + "\n")
        print(f"{len(results)} cases written to {FIXTURE} for {platform_tag()}")
    if args.dump:
        np.savez_compressed(
            args.dump, **{f"{c}::{k}": v for c, o in results.items() for k, v in o.items()}
        )
        print(f"{len(results)} cases dumped to {args.dump}")
    if args.compare:
        ref = np.load(args.compare)
        bad = 0
        for c, o in results.items():
            for k, v in o.items():
                key = f"{c}::{k}"
                if key not in ref.files:
                    print(f"{key}: not in the dump")
                    bad += 1
                    continue
                w = ref[key]
                if w.shape != v.shape or w.tobytes() != v.tobytes():
                    d = np.max(np.abs(w - v)) if w.shape == v.shape else float("nan")
                    s = np.max(np.abs(w)) if w.size else 0.0
                    print(f"{key}: differs (max |diff| {d:.3g}, max |ref| {s:.3g})")
                    bad += 1
        print(f"{bad} outputs differ" if bad else f"all {len(results)} cases bitwise equal")
        return 1 if bad else 0
    if not (args.write or args.dump):
        fx = fixture().get(platform_tag())
        if fx is None:
            print(f"no digests recorded for {platform_tag()}: --write records them")
            return 1
        got = digests(results)
        bad = [c for c in got if fx.get(c) != got[c]]
        print(
            f"{len(bad)} of {len(got)} cases differ from the fixture"
            if bad
            else f"all {len(got)} cases match the fixture"
        )
        for c in bad[:20]:
            print("  ", c)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
