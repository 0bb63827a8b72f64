# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The soft signed distance function (SSDF)
#
# An oriented point cloud (samples `p_i` with outward normals `n_i` and weights `a_i`)
# defines a smooth signed distance field
#
# $$\phi(x) = \sum_i w_i\, n_i\cdot(x - p_i), \qquad
# w = \mathrm{softmax}_i\big(\log a_i - |x - p_i|^2/\varepsilon\big),$$
#
# with closed-form derivatives to third order (`softcontact.ssdf`).  Small `eps` follows the
# nearest sample's tangent plane and keeps sharp features; large `eps` rounds the shape
# towards an ellipsoid.  This notebook reproduces the paper's Figure 4 (a 2D box for several
# temperatures and sample placements), then a non-convex polygon and a slice through a
# non-convex 3D mesh.

# %%
import numpy as np
import matplotlib.pyplot as plt
import softcontact as sc


def field(cloud, lo, hi, eps, n=220):
    xs = np.linspace(lo[0], hi[0], n)
    ys = np.linspace(lo[1], hi[1], n)
    X = np.stack(np.meshgrid(xs, ys), axis=-1)
    return xs, ys, sc.ssdf(cloud, X, eps, order=1)


def show(ax, cloud, lo, hi, eps, title, normals=True):
    xs, ys, r = field(cloud, lo, hi, eps)
    m = np.abs(r.phi).max()
    ax.pcolormesh(xs, ys, r.phi, cmap="RdBu_r", vmin=-m, vmax=m, shading="auto")
    ax.contour(xs, ys, r.phi, levels=[0.0], colors="tab:blue", linewidths=2)
    p, n = cloud.points, cloud.normals
    ax.plot(p[:, 0], p[:, 1], "o", ms=2.5, color="w")
    if normals:
        ax.quiver(p[:, 0], p[:, 1], n[:, 0], n[:, 1], color="w", scale=25, width=0.004)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    return r


# %% [markdown]
# ## Figure 4: a 2D box, several temperatures and sample placements
#
# Rows: three placements of the samples — the constructor's (every edge sampled, each corner
# once per adjacent edge with that edge's normal), a coarse version of it, and edge
# mid-points only (no corner samples).  Columns: increasing `eps` (in units of the box's
# half-width squared).  The zero level set is blue.

# %%
half = np.array([0.05, 0.03])
fine = sc.PointCloud.box(half, spacing=0.01)
coarse = sc.PointCloud.box(half, spacing=0.05)
mid = sc.PointCloud(
    [[0.05, 0], [-0.05, 0], [0, 0.03], [0, -0.03]], [[1, 0], [-1, 0], [0, 1], [0, -1]]
)
lo, hi = -2 * half, 2 * half
fig, axes = plt.subplots(3, 4, figsize=(12, 6.5), constrained_layout=True)
for row, (name, cloud) in enumerate(
    [
        ("constructor, spacing 1 cm", fine),
        ("constructor, spacing 5 cm", coarse),
        ("edge mid-points only", mid),
    ]
):
    for col, f in enumerate([1e-3, 1e-2, 1e-1, 1.0]):
        eps = f * 0.05**2
        show(axes[row, col], cloud, lo, hi, eps, f"{name}\neps = {eps:.1e} m^2")
plt.show()

# %% [markdown]
# With the fine constructor cloud and small `eps` the zero set is the box
# (inside, `phi` is the exact box SDF).  Coarse samples leave each sample's tangent plane in
# charge of a wide region, and the zero set grows "arrow heads" between them; mid-points
# alone cannot see the corners at all.  As `eps` grows every cloud's zero set rounds off towards an ellipse.
#
# On a flat face the gradient is the face normal.  Beyond a corner the two coincident corner
# samples share the weight, so `phi` is the average of the two faces' plane distances (gradient
# (0.5, 0.5)) rather than the Euclidean distance to the corner: a smooth under-estimate.

# %%
queries = [[0.08, 0.0], [0.0, 0.05], [0.07, 0.05], [0.0, 0.0]]
r = sc.ssdf(fine, queries, 1e-5, order=2)
print("phi :", np.round(r.phi, 4))
print("grad:", np.round(r.grad, 3).tolist())
print("Hessian symmetric:", np.array_equal(r.hess, np.swapaxes(r.hess, -1, -2)))

# %% [markdown]
# ## A non-convex polygon
#
# Any simple polygon, either orientation: here a five-pointed star.  The SSDF is smooth
# everywhere, also in the concave notches where the true distance function has a kink.

# %%
k = np.arange(10)
rad = np.where(k % 2 == 0, 0.05, 0.02)
ang = np.pi / 2 + k * np.pi / 5
star = np.stack([rad * np.cos(ang), rad * np.sin(ang)], 1)
cloud = sc.PointCloud.polygon(star, spacing=0.004)
fig, axes = plt.subplots(1, 3, figsize=(12, 4), constrained_layout=True)
for ax, eps in zip(axes, [1e-6, 1e-5, 1e-4]):
    show(ax, cloud, [-0.07, -0.07], [0.07, 0.07], eps, f"star, eps = {eps:.0e} m^2", normals=False)
plt.show()


# %% [markdown]
# ## A slice through a non-convex 3D mesh
#
# A torus (major radius 4 cm, minor radius 1.5 cm) given as a triangle mesh, sampled by
# `PointCloud.from_mesh` — no convex decomposition.  The slice `z = 0` cuts the tube twice:
# the zero set is two circles, and the hole in the middle is outside (`phi > 0`).


# %%
def torus_mesh(R=0.04, r=0.015, nu=48, nv=24):
    u = np.linspace(0, 2 * np.pi, nu, endpoint=False)
    v = np.linspace(0, 2 * np.pi, nv, endpoint=False)
    U, V = np.meshgrid(u, v, indexing="ij")
    verts = np.stack(
        [(R + r * np.cos(V)) * np.cos(U), (R + r * np.cos(V)) * np.sin(U), r * np.sin(V)], -1
    ).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    a = i * nv + j
    b = ((i + 1) % nu) * nv + j
    c = ((i + 1) % nu) * nv + (j + 1) % nv
    d = i * nv + (j + 1) % nv
    faces = np.concatenate(
        [np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)]
    )
    return verts, faces


torus = sc.PointCloud.from_mesh(*torus_mesh(), spacing=0.004)
print(torus)
n = 200
xs = np.linspace(-0.07, 0.07, n)
X = np.stack([*np.meshgrid(xs, xs), np.zeros((n, n))], axis=-1)
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), constrained_layout=True)
for ax, eps in zip(axes, [2e-6, 1e-4]):
    phi = sc.ssdf(torus, X, eps).phi
    m = np.abs(phi).max()
    im = ax.pcolormesh(xs, xs, phi, cmap="RdBu_r", vmin=-m, vmax=m, shading="auto")
    ax.contour(xs, xs, phi, levels=[0.0], colors="k")
    ax.set_aspect("equal")
    ax.set_title(f"torus, slice z = 0, eps = {eps:.0e} m^2")
    fig.colorbar(im, ax=ax, label="phi [m]")
plt.show()
centre = sc.ssdf(torus, [[0.0, 0.0, 0.0], [0.04, 0.0, 0.0]], 2e-6).phi
print("phi at the centre of the hole (outside, ~2.5 cm):", centre[0].round(4))
print("phi at the centre of the tube (inside, ~-1.5 cm):", centre[1].round(4))
