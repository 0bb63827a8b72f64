# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The soft-minimum contact model (SCM), compared with MuJoCo
#
# `softcontact.contact` turns two posed oriented point clouds into contact forces in three
# smooth steps.
#
# **Separation field.**  Every sample of body A is evaluated in body B's SSDF and vice versa,
# giving $\Phi \in \mathbb{R}^{I+J}$; $\Phi_k < 0$ means sample $k$ penetrates the other body,
# and $G_k$ is the other body's SSDF gradient there (the contact normal at that sample).
#
# **Depth and distribution.**  A soft minimum with temperature $\varepsilon_c$ (a length):
#
# $$m = -\varepsilon_c \log \sum_k e^{-\Phi_k/\varepsilon_c}, \qquad
# \pi = \mathrm{softmax}(-\Phi/\varepsilon_c) = \partial m / \partial \Phi .$$
#
# The depth $m$ lies between $\min\Phi - \varepsilon_c \log(I+J)$ and $\min\Phi$: it is *lower*
# than the deepest sample by about $\varepsilon_c \log N$, with $N$ the number of samples
# within a few $\varepsilon_c$ of the minimum.  The distribution $\pi$ spreads the contact over
# exactly those samples.
#
# **Force law.**  With the smooth ramp $\mathrm{sp}_b(z) = b\log(1+e^{z/b})$ and the logistic
# $s_b(z) = 1/(1+e^{-z/b})$, $b = \beta$, the potential is $U = \tfrac{k}{2}\,\mathrm{sp}_b(-m)^2$
# and the normal force magnitude $\lambda = k\,\mathrm{sp}_b(-m)\,s_b(-m)$: zero for
# $m \gg \beta$, about $k\,(-m)$ for $-m \gg \beta$.  Sample $k$'s owner gets
# $f_k = \lambda\,\pi_k G_k$ at the sample, the other body $-f_k$: equal and opposite,
# conservative, $C^\infty$.
#
# **Damping** acts on each sample's normal velocity $\nu_k\cdot u_k$ ($u_k$ the relative
# velocity at sample $k$, $\nu_k = G_k/|G_k|$): per sample
# $-c\, s_b(-m)\,\pi_k\,(\nu_k\cdot u_k)\,\nu_k$, so rocking and rolling are damped like
# bouncing.
# **Friction** is a smooth Coulomb law on the tangential relative velocity $t_k$:
# $-\mu\lambda\,\pi_k\, t_k/\sqrt{|t_k|^2 + v_s^2}$.  Neither can add energy.
#
# Below, all velocities are zero, so only the spring part acts.  MuJoCo is given the *same*
# stiffness through a negative `solref = (-k, 0)` (a reference acceleration $-k\,r$) with
# `dmin = dmax` in `solimp`; for a 1 kg body that slides along the contact normal this gives
# exactly $k$ times the penetration.

# %%
import dataclasses

import matplotlib.pyplot as plt
import mujoco
import numpy as np

import softcontact as sc

P = sc.ContactParams()  # SI defaults
K = P.stiffness
ZERO = np.zeros(6)
IDENT = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
SOL = f'condim="1" solref="-{K} 0" solimp="0.9999 0.9999 0.001 0.5 2"'  # normal force only


def mj_contacts(model, data):
    """Positions, normals and normal forces of MuJoCo's active contacts."""
    f6, forces = np.zeros(6), []
    for i in range(data.ncon):
        mujoco.mj_contactForce(model, data, i, f6)
        forces.append(f6[0])
    con = data.contact
    return con.pos[: data.ncon].copy(), con.frame[: data.ncon, :3].copy(), np.array(forces)


print("softcontact", sc.__version__, "| mujoco", mujoco.__version__)
print(P)

# %% [markdown]
# ## Two spheres (Figure 1)
#
# Two spheres of radius 5 cm; one is fixed, the other moved along y from a 10 mm gap to a
# 10 mm overlap.  The SCM curve is drawn for several values of each smoothing parameter (the
# other two at their defaults: `eps_c = beta = 1 mm`, `eps = 1e-5 m^2`), beside MuJoCo's
# sphere-sphere contact with the same stiffness.

# %%
R = 0.05
ball = sc.PointCloud.sphere(R, 0.004)  # ~2000 samples
gaps = np.linspace(10e-3, -10e-3, 51)  # centre distance minus 2 R


def scm_curve(params):
    return np.array(
        [
            sc.contact(
                ball, IDENT, ZERO, ball, [0, 2 * R + g, 0, 1, 0, 0, 0], ZERO, params
            ).wrench_b[1]
            for g in gaps
        ]
    )


spheres_xml = f"""<mujoco><option gravity="0 0 0"/><worldbody>
  <geom type="sphere" size="{R}" {SOL}/>
  <body pos="0 {2 * R} 0"><joint type="slide" axis="0 1 0"/>
    <geom type="sphere" size="{R}" mass="1" {SOL}/></body>
</worldbody></mujoco>"""
model = mujoco.MjModel.from_xml_string(spheres_xml)
data = mujoco.MjData(model)
f_mj = []
for g in gaps:
    data.qpos[0] = g
    mujoco.mj_forward(model, data)
    f_mj.append(mj_contacts(model, data)[2].sum())
f_mj = np.array(f_mj)

variants = {"eps_c": [0.5e-3, 1e-3, 2e-3], "beta": [0.5e-3, 1e-3, 2e-3], "eps": [3e-6, 1e-5, 3e-5]}
unit = {"eps_c": ("mm", 1e3), "beta": ("mm", 1e3), "eps": ("mm^2", 1e6)}
curves = {
    (name, v): scm_curve(dataclasses.replace(P, **{name: v}))
    for name, values in variants.items()
    for v in values
}

fig, axes = plt.subplots(1, 3, figsize=(14, 4.3), sharey=True, constrained_layout=True)
for ax, (name, values) in zip(axes, variants.items()):
    u, scale = unit[name]
    for v, c in zip(values, ["C0", "C1", "C2"]):
        ax.plot(gaps * 1e3, curves[name, v], c, lw=2, label=f"SCM, {name} = {v * scale:g} {u}")
    ax.plot(gaps * 1e3, f_mj, "k--", lw=2, label="MuJoCo, same stiffness")
    ax.axvline(0, color="0.6", lw=0.8)
    ax.invert_xaxis()
    ax.set_xlabel("gap [mm]   (negative: overlap)")
    ax.set_title(f"varying {name}")
    ax.legend(fontsize=8, loc="upper left")
axes[0].set_ylabel("normal force on the moving sphere [N]")
plt.show()

# %%
f0 = curves["eps_c", 1e-3]  # the defaults
deep = gaps <= -3e-3
slope_scm = np.polyfit(-gaps[deep], f0[deep], 1)[0]
slope_mj = np.polyfit(-gaps[deep], f_mj[deep], 1)[0]
print(
    f"SCM force at a 4 mm gap {f0[np.isclose(gaps, 4e-3)][0]:.3f} N, at a 2 mm gap "
    f"{f0[np.isclose(gaps, 2e-3)][0]:.2f} N, at touching {f0[np.isclose(gaps, 0)][0]:.2f} N"
)
print(f"MuJoCo force for every gap > 0: {np.unique(f_mj[gaps > 0])} N")
print(
    f"slope over 3-10 mm overlap: SCM {slope_scm:.0f} N/m, MuJoCo {slope_mj:.0f} N/m "
    f"(stiffness {K:.0f} N/m)"
)
print(
    "largest second difference of the sampled curve: "
    f"SCM {np.abs(np.diff(f0, 2)).max():.3f} N, MuJoCo {np.abs(np.diff(f_mj, 2)).max():.3f} N"
)

ends = [
    sc.contact(ball, IDENT, ZERO, ball, [0, 2 * R + g, 0, 1, 0, 0, 0], ZERO, P)
    for g in (0.0, -10e-3)
]
for g, r in zip((0, -10), ends):
    print(
        f"gap {g:+d} mm: min(Phi) = {r.phi.min() * 1e3:+.2f} mm, depth m = "
        f"{r.depth * 1e3:+.2f} mm (soft-min shift {(r.phi.min() - r.depth) * 1e3:.2f} mm; "
        f"bound eps_c log(I+J) = {P.eps_c * np.log(r.phi.size) * 1e3:.2f} mm)"
    )

# %% [markdown]
# MuJoCo's force is exactly zero until the spheres touch and then jumps onto the line
# `k * overlap`: a kink, where its second difference is `k * step` and its derivative is
# undefined.  SCM's curve is smooth and starts a few millimetres *before* contact, because the
# soft minimum puts the depth `m` about 3 mm below the deepest sample (the sphere has a patch of
# roughly e^3 samples within `eps_c` of the minimum).  Larger `eps_c` moves the onset further
# out; larger `beta` rounds the knee; `eps` changes the shape of the sphere's SSDF near the
# contact and so, mildly, both.  Once the overlap is large against all three lengths the
# curves are parallel to MuJoCo's: the slope is the stiffness, a few per cent lower because
# the force is spread over a patch whose normals are not all along y.

# %% [markdown]
# ## A box on a floor (Figure 5)
#
# A 10 x 10 x 5 cm box (samples every 5 mm) on the half-space `z <= 0`, pressed 2 mm into it,
# level and tilted by 5 degrees about x.  Top row: SCM's force on each sample of the box
# (arrows; samples carrying less than 0.1 % of the largest are hidden).  Middle row: MuJoCo's
# box-plane contacts with their normal forces (a free 1 kg box, same stiffness).  The arrow
# scale differs between panels: the longest arrow is always 2.5 cm.  Bottom row: the bottom
# face projected on the floor, SCM's per-sample force as colour and MuJoCo's contact points.

# %%
half = np.array([0.05, 0.05, 0.025])
box = sc.PointCloud.box(half, 0.005)
floor = sc.PointCloud.halfspace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
box_xml = f"""<mujoco><option gravity="0 0 0"/><worldbody>
  <geom type="plane" size="1 1 0.1" {SOL}/>
  <body><freejoint/><geom type="box" size="{half[0]} {half[1]} {half[2]}" mass="1" {SOL}/></body>
</worldbody></mujoco>"""
bmodel = mujoco.MjModel.from_xml_string(box_xml)
bdata = mujoco.MjData(bmodel)
corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
edges = [(i, j) for i in range(8) for j in range(i + 1, 8) if bin(i ^ j).count("1") == 1]


def draw_box(ax, pos, quat):
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, np.asarray(quat, float))
    c = corners @ rot.reshape(3, 3).T + pos
    for i, j in edges:
        ax.plot(*c[[i, j]].T, color="0.5", lw=0.8)
    xx, yy = np.meshgrid([-0.08, 0.08], [-0.08, 0.08])
    ax.plot_surface(xx, yy, 0 * xx, color="tan", alpha=0.25)
    ax.set_xlim(-0.08, 0.08)
    ax.set_ylim(-0.08, 0.08)
    ax.set_zlim(-0.01, 0.07)
    ax.set_box_aspect((1, 1, 0.5))
    ax.view_init(elev=18, azim=-60)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")


def arrows(ax, x, f, color):
    s = 0.025 / np.linalg.norm(f, axis=1).max()
    ax.quiver(*x.T, *(f * s).T, color=color, linewidth=0.6, arrow_length_ratio=0.2)


pen, tilt = 2e-3, np.deg2rad(5.0)
cases = {
    "level": (half[2] - pen, [1.0, 0.0, 0.0, 0.0]),
    "tilted 5 deg about x": (
        half[2] * np.cos(tilt) + half[1] * np.sin(tilt) - pen,
        [np.cos(tilt / 2), np.sin(tilt / 2), 0.0, 0.0],
    ),
}
fig = plt.figure(figsize=(12, 13), constrained_layout=True)
n = len(box)
for col, (name, (z, quat)) in enumerate(cases.items()):
    pos = np.array([0.0, 0.0, z])
    r = sc.contact(box, [*pos, *quat], ZERO, floor, IDENT, ZERO, P)
    f, x = r.forces[:n], r.points[:n]
    on = f[:, 2] > 1e-3 * f[:, 2].max()
    ax = fig.add_subplot(3, 2, col + 1, projection="3d")
    draw_box(ax, pos, quat)
    arrows(ax, x[on], f[on], "C3")
    ax.set_title(f"SCM, {name}: {on.sum()} samples, total {r.wrench_a[2]:.2f} N")
    print(
        f"SCM {name}: force {r.wrench_a[:3].round(3)} N, torque about the centre "
        f"{r.wrench_a[3:].round(4)} N m, depth m = {r.depth * 1e3:.2f} mm"
    )

    bdata.qpos[:] = [*pos, *quat]
    mujoco.mj_forward(bmodel, bdata)
    cpos, cnrm, fn = mj_contacts(bmodel, bdata)
    ax = fig.add_subplot(3, 2, col + 3, projection="3d")
    draw_box(ax, pos, quat)
    arrows(ax, cpos, cnrm * fn[:, None], "C0")
    ax.scatter(*cpos.T, color="C0", s=25)
    ax.set_title(f"MuJoCo, {name}: {len(fn)} contacts, total {fn.sum():.2f} N")
    print(f"MuJoCo {name}: {len(fn)} contacts at {cpos.round(3).tolist()}, forces {fn.round(3)} N")

    # projected on the floor: SCM's per-sample force (colour), MuJoCo's contact points
    ax = fig.add_subplot(3, 2, col + 5)
    bottom = box.normals[:, 2] < -0.5
    sca = ax.scatter(
        x[bottom, 0],
        x[bottom, 1],
        c=f[bottom, 2] * 1e3,
        cmap="Reds",
        s=28,
        vmin=0,
        edgecolors="0.7",
        linewidths=0.3,
    )
    fig.colorbar(sca, ax=ax, label="SCM force per bottom-face sample [mN]")
    ax.scatter(
        cpos[:, 0],
        cpos[:, 1],
        s=400 * fn / fn.max(),
        facecolors="none",
        edgecolors="C0",
        linewidths=2,
        label="MuJoCo contacts (area ~ force)",
    )
    ax.set_aspect("equal")
    ax.set_xlim(-0.065, 0.065)
    ax.set_ylim(-0.065, 0.08)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(f"{name}: bottom face projected on the floor")
    ax.legend(loc="upper right", fontsize=8)
plt.show()

# %%
pens = np.array([0.5, 1, 2, 5, 10]) * 1e-3
f_scm, f_mjb = [], []
for p in pens:
    f_scm.append(
        sc.contact(box, [0, 0, half[2] - p, 1, 0, 0, 0], ZERO, floor, IDENT, ZERO, P).wrench_a[2]
    )
    bdata.qpos[:] = [0, 0, half[2] - p, 1, 0, 0, 0]
    mujoco.mj_forward(bmodel, bdata)
    f_mjb.append(mj_contacts(bmodel, bdata)[2].sum())
f_scm, f_mjb = np.array(f_scm), np.array(f_mjb)
print("penetration [mm]      ", pens * 1e3)
print("SCM total force [N]   ", f_scm.round(3))
print("MuJoCo total force [N]", f_mjb.round(3))
print(
    "slopes [N/m]: SCM",
    (np.diff(f_scm) / np.diff(pens)).round(0),
    " MuJoCo",
    (np.diff(f_mjb) / np.diff(pens)).round(0),
)
n_tie = 21 * 21 + 4 * 21  # bottom face, bottom edges of the sides (the floor's own sample
#                           takes no part: a half-space is an exact plane)
print(
    f"offset SCM - MuJoCo: {(f_scm - f_mjb).mean():.2f} N;  k eps_c log(N_tie) = "
    f"{K * P.eps_c * np.log(n_tie):.2f} N with N_tie = {n_tie} samples at the deepest level"
)

# %% [markdown]
# On the level box every sample of the bottom face is equally deep, so `pi` is uniform
# over them: the force is spread evenly over the whole face (plus the bottom rows of the side
# faces), its centre of pressure is the face centre and the torque about the box centre
# vanishes.  MuJoCo reports four corner contacts sharing the same total.  Tilted, SCM's
# distribution decays like `exp(-height / eps_c)` away from the lower edge, a band about
# `eps_c / tan 5 deg ~ 1 cm` wide, with a restoring torque; MuJoCo keeps the two corners of the
# lower edge.  Its total is then much smaller: MuJoCo's `solref` stiffness is an acceleration
# per unit of penetration, so its force scales with the effective mass at the contact, which
# the box's rotation about that edge reduces.
#
# Both totals grow with slope `k` on the level box, but SCM's is offset by
# `k eps_c log N_tie`: with 525 samples at the deepest level the depth `m` is 6.3 mm deeper
# than the deepest sample, and the box feels 12.5 N while only touching the floor (under
# gravity a 1 kg box would rest about 1.3 mm *above* it).  The offset grows with the number of samples on the face, i.e.
# with finer sampling; `eps_c` sets it.

# %% [markdown]
# ## Non-convex shapes in 2D
#
# The same function works in 2D (poses `(x, y, theta)`).  Left: a star wedged into the
# concave corner of the planar-pushing T, touching the stem and the underside of the bar
# at once.  Right: two T's interlocked (the second one turned by 180 degrees), pressed
# together 2 mm so that they touch in two separate places.  Arrows: the force on each
# sample's owner (red on the T, blue on the other body), samples carrying less than 1 % of
# the largest hidden.  The clouds are the shapes' outlines as given: there is no convex
# decomposition anywhere, and each contact patch comes out of the same soft minimum.

# %%
tee = sc.PointCloud.t_shape()  # 12 x 12 cm, samples every 5 mm
tv = sc.PointCloud.t_shape_vertices()
k = np.arange(10)
rad = np.where(k % 2 == 0, 0.025, 0.010)
ang = np.deg2rad(135) + k * np.pi / 5  # one tip points into the corner
star_v = np.stack([rad * np.cos(ang), rad * np.sin(ang)], 1)
star = sc.PointCloud.polygon(star_v, 0.003)

corner = tv[2]  # concave corner between the stem's right side and the bar's underside
a = 0.020  # the tips at +-72 deg from the diagonal reach 2.3 mm into the T
pen = 2e-3
scenes = {
    "star in the T's concave corner": (star, star_v, [corner[0] + a, corner[1] - a, 0.0]),
    "two interlocked T's": (tee, tv, [0.033, tv[2, 1] + tv[0, 1] + pen, np.pi]),
}


def outline(ax, verts, pose, color):
    c, s = np.cos(pose[2]), np.sin(pose[2])
    v = verts @ np.array([[c, -s], [s, c]]).T + pose[:2]
    ax.fill(*np.vstack([v, v[:1]]).T, color=color, alpha=0.15)
    ax.plot(*np.vstack([v, v[:1]]).T, color=color, lw=1)


fig, axes = plt.subplots(1, 2, figsize=(13, 6), constrained_layout=True)
for ax, (name, (other, other_v, pose)) in zip(axes, scenes.items()):
    r = sc.contact(tee, [0, 0, 0], [0, 0, 0], other, pose, [0, 0, 0], P)
    outline(ax, tv, [0, 0, 0], "C3")
    outline(ax, other_v, pose, "C0")
    fmag = np.linalg.norm(r.forces, axis=1)
    on = fmag > 0.01 * fmag.max()
    owner = np.where(np.arange(len(fmag)) < len(tee), "C3", "C0")
    x, f = r.points[on], r.forces[on]
    ax.quiver(
        *x.T,
        *f.T,
        color=owner[on],
        angles="xy",
        scale_units="xy",
        scale=fmag.max() / 0.012,
        width=0.004,
    )
    ax.plot(*x.T, "k.", ms=3)
    ax.set_aspect("equal")
    ax.set_title(
        f"{name}\nforce on the T {r.wrench_a[:2].round(2)} N, {on.sum()} samples carry force"
    )
    print(
        f"{name}: depth m = {r.depth * 1e3:.2f} mm, min Phi = {r.phi.min() * 1e3:.2f} mm, "
        f"wrench on the T {r.wrench_a.round(3)}, on the other {r.wrench_b.round(3)}"
    )
plt.show()

# %% [markdown]
# ## What the comparison with MuJoCo shows
#
# * **Onset.**  MuJoCo's normal force is exactly zero while the bodies are apart and switches
#   on with a kink at contact.  SCM's force is a smooth function of the configuration: it
#   starts a few millimetres before geometric contact (the soft minimum places the depth
#   `m` about `eps_c log N` below the deepest sample, N the number of nearly-deepest
#   samples) and decays exponentially with the gap, over a length of about `beta / 2`.
# * **Stiffness.**  Once the penetration is large against `beta`, `eps_c` and `sqrt(eps)`,
#   SCM's force grows with slope close to `k`: exactly `k` for the level box (all normals
#   vertical), a few per cent less for the spheres (the force is spread over a patch of
#   tilted normals).  MuJoCo configured with the same stiffness has the same slope; the two
#   curves are parallel, offset by the soft-minimum shift.
# * **Distribution.**  MuJoCo collapses a face contact to a handful of points (four box
#   corners, two on a tilted box) whose number and placement jump with the configuration.
#   SCM spreads the force over every sample within a few `eps_c` of the deepest: hundreds of
#   samples under a level box, a band along the lower edge of a tilted one, several separate
#   patches between non-convex shapes, all from one soft minimum and without any convex
#   decomposition.
# * **Price.**  The depth, and with it the force at a given geometric penetration, depends on
#   the sampling density (through `log N`); and SCM concentrates the force on the deepest
#   region only, so two patches share the load only when they are about equally deep (within
#   a few `eps_c`), unlike a rigid-contact solver.

# %% [markdown]
# ## Time steps: the implicit integrator
#
# A resting contact is stiffest in its friction: below the slip velocity `v_s` the smooth
# Coulomb law is a damper of rate `mu lambda / (v_s m)`, which the semi-implicit Euler step
# (`integrator="euler"`) only resolves below ~1 ms for a 1 kg box.  `Scene.build` says so
# (`SoftContactWarning`, from `Scene.stability_limits`).  `integrator="implicit"` takes the
# velocity-dependent forces (damping, friction) at the new velocities, friction with its
# coefficient `mu lambda / |t|_s` held at the current ones, one linear solve per step: the
# box rests at 10 ms steps.  Then a kick about x: the damping of every sample's normal
# velocity makes the rocking die out (on a frictionless floor here, so that only the
# contact damping acts).

# %%
import warnings

cube = sc.PointCloud.box([0.05, 0.05, 0.05], 0.01)


def cube_scene(params=P):
    s = sc.Scene(dim=3)
    s.add_body(floor, kind="static", name="floor")
    s.add_body(cube, pose=[0, 0, 0.05, 1, 0, 0, 0], name="cube")  # 1 kg
    s.add_contact("cube", "floor", params)
    return s


for integrator in ("euler", "implicit"):
    limits = cube_scene().stability_limits(integrator)
    print(integrator, [(x.term, f"{x.dt_max * 1e3:.2f} ms") for x in limits])
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), constrained_layout=True)
for integrator, dt in (("euler", 0.01), ("implicit", 0.01), ("euler", 5e-4)):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = cube_scene().build(dt, integrator)
    for w in caught:
        print(f"{integrator}, dt = {dt}: {w.message}")
    X = model.rollout(model.initial_state(), np.zeros((int(1 / dt), 0))).states
    t = np.arange(len(X)) * dt
    axes[0].semilogy(
        t,
        np.abs(X[:, model.nq + 3 :]).max(axis=1) + 1e-18,
        label=f"{integrator}, dt = {dt * 1e3:g} ms",
    )
axes[0].set_xlabel("t [s]")
axes[0].set_ylabel("|angular velocity| [rad/s]")
axes[0].set_title("a cube resting on a floor")
axes[0].legend()
for c in (0.0, P.damping):
    model = cube_scene(dataclasses.replace(P, friction=0.0, damping=c)).build(2e-3, "implicit")
    x = model.rollout(model.initial_state(), np.zeros((500, 0))).states[-1]
    x[model.nq + 3] = 1.0  # rocking about x at 1 rad/s
    X = model.rollout(x, np.zeros((500, 0))).states
    axes[1].plot(np.arange(len(X)) * 2e-3, X[:, model.nq + 3], label=f"damping c = {c:g} N s/m")
axes[1].set_xlabel("t [s]")
axes[1].set_ylabel("rocking rate [rad/s]")
axes[1].set_title("a kicked cube on a frictionless floor (implicit, 2 ms)")
axes[1].legend()
plt.show()

# %% [markdown]
# The implicit step keeps the contact stiffness explicit (symplectic, so elastic contacts keep
# their energy) and gives exact first and parameter derivatives; Hessians of trajectories
# need `integrator="euler"` at a time step within `stability_limits`.
#
# ## Parameters fitted to the bodies
#
# Without `params`, `Scene.add_contact` fits them at build (`ContactParams.for_bodies`): the
# lighter body rests 1 % of the smaller body's size deep whatever its sampling, the normal
# mode is critically damped, the slip velocity is 0.5 mm/s, and the model is stable at its
# `dt` (`Model.contact_params` lists them).  A cube sampled every 2.5, 5 and 10 mm rests at
# the same depth; set sliding at 1 m/s it stops where Coulomb's law says, `v0^2 / (2 mu g)`.

# %%
for spacing in (0.0025, 0.005, 0.01):
    s = sc.Scene(dim=3)
    s.add_body(floor, kind="static", name="floor")
    s.add_body(sc.PointCloud.box([0.05] * 3, spacing), mass=1.0, pose=[0, 0, 0.05, 1, 0, 0, 0])
    s.add_contact("floor", "body1", friction=0.5)
    model = s.build(0.005, "implicit")
    x = model.rollout(model.initial_state(), np.zeros((200, 0))).states[-1]
    depth = -(s._bodies[1].cloud.points[:, 2] + x[2]).min()  # no rotation at rest
    x[model.nq] = 1.0  # slide at 1 m/s along x
    X = model.rollout(x, np.zeros((300, 0))).states
    print(
        f"{len(s._bodies[1].cloud)} samples: resting {depth * 1e3:.3f} mm deep, "
        f"stopped after {(X[-1, 0] - x[0]) * 1e3:.1f} mm "
        f"(Coulomb {1e3 / (2 * 0.5 * 9.81):.1f} mm), k = {model.contact_params[0].stiffness:.0f} N/m"
    )

# %% [markdown]
# ## Seeing a 3D scene
#
# `Model.plot(x)` draws every body of a model as the state `x` poses it (matplotlib 3D;
# half-spaces as a grey patch).  The cube sampled every 5 mm, dropped from 10 cm with a
# tilt, bounces and comes to rest on a face:

# %%
s = sc.Scene(dim=3)
s.add_body(floor, kind="static", name="floor")
tilt = [np.cos(0.3), np.sin(0.3) / np.sqrt(2), np.sin(0.3) / np.sqrt(2), 0.0]
s.add_body(sc.PointCloud.box([0.05] * 3, 0.005), mass=1.0, pose=[0, 0, 0.15, *tilt], name="cube")
s.add_contact("floor", "cube", friction=0.5)
model = s.build(0.005, "implicit")
X = model.rollout(model.initial_state(), np.zeros((300, 0))).states
fig = plt.figure(figsize=(10, 3.6))
for k, t in enumerate((0, 40, 300)):
    model.plot(X[t], fig.add_subplot(1, 3, k + 1, projection="3d"), title=f"t = {t * 0.005:.1f} s")
plt.show()
