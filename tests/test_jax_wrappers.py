"""softcontact.jax: JAX functions of the step, rollout, SSDF and contact.

- jax.test_util.check_grads to second order: step, SSDF and contact in forward and
  reverse mode, rollouts in reverse mode (grad of grad), on the 2D push and the 3D box.
- Under jit and vmap: the same values and gradients as eager calls and loops; values
  equal the NumPy API's bit for bit, and gradients equal softcontact.torch's.
- Forward mode through a rollout is refused by JAX (custom_vjp); bad input raises
  ValueError/TypeError naming the argument.
"""

import autodiff_cases as cases
import numpy as np
import pytest

import softcontact as sc

jax = pytest.importorskip("jax")
sj = pytest.importorskip("softcontact.jax")

from jax.test_util import check_grads  # noqa: E402

jnp = jax.numpy
EPS = 1e-7  # within the quaternions' 1e-6 normalisation tolerance


@pytest.fixture(autouse=True)
def _x64():
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("case", cases.CASES)
def test_step_and_rollout_check_grads(case):
    model, x0, U = cases.problem(case)
    x, u = jnp.asarray(x0), jnp.asarray(U)
    check_grads(lambda a, b: sj.step(model, a, b), (x, u[0]), 2, eps=EPS, atol=1e-5, rtol=1e-4)
    check_grads(
        lambda a, b: sj.rollout(model, a, b),
        (x, u),
        2,
        modes=("rev",),
        eps=EPS,
        atol=1e-5,
        rtol=1e-4,
    )
    assert np.array_equal(np.asarray(sj.rollout(model, x, u)), model.rollout(x0, U).states)
    assert np.array_equal(np.asarray(sj.step(model, x, u[0])), model.step(x0, U[0]).x_next)


def test_ssdf_and_contact_check_grads():
    cloud = sc.PointCloud.t_shape(spacing=0.004)
    x = jnp.array([[-0.012, -0.0813], [0.05, 0.045]])
    check_grads(lambda a: sj.ssdf(cloud, a, 1.6e-5), (x,), 2, eps=EPS)
    ball, args = cases.contact_case()
    f = lambda a, b, c, d: sj.contact(ball, a, b, ball, c, d)  # noqa: E731
    check_grads(f, tuple(map(jnp.asarray, args)), 2, eps=EPS, atol=1e-4, rtol=1e-3)
    wa, _ = f(*args)
    assert np.array_equal(np.asarray(wa), sc.contact(ball, *args[:2], ball, *args[2:]).wrench_a)


def test_jit_vmap_and_torch_agree():
    model, x0, U = cases.problem("push-contact")
    rng = np.random.default_rng(3)
    Ub = U + 0.01 * rng.standard_normal((3,) + U.shape)

    def loss(x, u):
        X = sj.rollout(model, x, u)
        return jnp.sum(X[-1, :3] ** 2) + 0.1 * jnp.sum(u**2)

    g = jax.grad(loss, argnums=(0, 1))
    eager = [g(jnp.asarray(x0), jnp.asarray(u)) for u in Ub]
    jitted = jax.jit(g)(jnp.asarray(x0), jnp.asarray(Ub[1]))
    vmapped = jax.vmap(g, in_axes=(None, 0))(jnp.asarray(x0), jnp.asarray(Ub))
    # XLA may fuse the loss's own arithmetic differently under jit: equal to rounding
    for k in range(2):
        np.testing.assert_allclose(jitted[k], eager[1][k], rtol=1e-12, atol=1e-15)
        for i in range(3):
            np.testing.assert_allclose(vmapped[k][i], eager[i][k], rtol=1e-12, atol=1e-15)
    # second order: the Hessian-vector product through grad of grad, as in PyTorch
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("softcontact.torch")
    v = rng.standard_normal(U.shape)
    hv = jax.grad(lambda u: jnp.vdot(jax.grad(loss, argnums=1)(jnp.asarray(x0), u), v))(
        jnp.asarray(U)
    )
    ut = torch.tensor(U, requires_grad=True)
    X = st.rollout(model, torch.tensor(x0), ut)
    lt = (X[-1, :3] ** 2).sum() + 0.1 * (ut**2).sum()
    (gt,) = torch.autograd.grad(lt, ut, create_graph=True)
    (hvt,) = torch.autograd.grad((gt * torch.tensor(v)).sum(), ut)
    np.testing.assert_allclose(hv, hvt.numpy(), rtol=1e-10, atol=1e-12)
    gj = jax.grad(loss, argnums=1)(jnp.asarray(x0), jnp.asarray(U))
    np.testing.assert_allclose(gj, gt.detach().numpy(), rtol=1e-12, atol=1e-15)


def test_float32_rollout_gradients_and_errors_from_the_callbacks():
    """With JAX's default float32 a 3D rollout differentiates (the adjoint reruns the
    float64 states); values refused in the callback reach the caller as JaxRuntimeError
    with softcontact's message."""
    model, x0, U = cases.problem("box3d")
    loss = lambda x, u: jnp.sum(sj.rollout(model, x, u)[-1, :3] ** 2)  # noqa: E731
    g64 = np.asarray(jax.grad(loss, argnums=1)(jnp.asarray(x0), jnp.asarray(U)))
    jax.config.update("jax_enable_x64", False)
    try:
        g32 = jax.grad(loss, argnums=1)(jnp.asarray(x0, jnp.float32), jnp.asarray(U, jnp.float32))
        assert g32.dtype == jnp.float32
        g32 = np.asarray(g32)
        np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5 * float(np.abs(g64).max()))
    finally:
        jax.config.update("jax_enable_x64", True)
    bad = x0.copy()
    bad[3:7] *= 1.001
    with pytest.raises(jax.errors.JaxRuntimeError, match="x0: a quaternion is not unit"):
        sj.rollout(model, jnp.asarray(bad), jnp.asarray(U)).block_until_ready()


def test_forward_mode_through_a_rollout_is_refused_and_bad_input_named():
    model, x0, U = cases.problem("push-contact")
    x, u = jnp.asarray(x0), jnp.asarray(U)
    with pytest.raises(TypeError, match="custom_vjp"):
        jax.jvp(lambda a: sj.rollout(model, a, u), (x,), (x,))
    with pytest.raises(ValueError, match=rf"x0 must have shape \(\.\.\., {model.nx}\)"):
        sj.rollout(model, x[:-1], u)
    with pytest.raises(ValueError, match="T .the number of steps. is needed"):
        box = sc.Scene(dim=3)
        box.add_body(sc.PointCloud.box([0.05] * 3, 0.02), mass=1.0, name="box")
        sj.rollout(box.build(0.01), jnp.asarray(box.build(0.01).initial_state()), None)
    with pytest.raises(TypeError, match="model must be a Model"):
        sj.step(None, x, u[0])
    with pytest.raises(ValueError, match="do not broadcast"):
        sj.step(model, jnp.stack([x, x]), jnp.stack([u[0]] * 3))
