"""softcontact.torch: autograd functions of the step, rollout, SSDF and contact.

- torch.autograd.gradcheck and gradgradcheck (first and second derivatives against
  central differences) on the 2D push and the 3D box (quaternions), short rollouts, the
  SSDF near the T's corner and a contact between two turned spheres; float64 inputs.
- The values equal the NumPy API's bit for bit; the gradients equal the NumPy layer's
  (softcontact._autodiff, tested against differences in test_autodiff.py).
- Batches broadcast and equal loops; float32 tensors give float32 results; bad input
  raises ValueError/TypeError naming the argument; a diverging rollout raises
  DivergenceError; inputs are never modified.
"""

import autodiff_cases as cases
import numpy as np
import pytest

import softcontact as sc

torch = pytest.importorskip("torch")
st = pytest.importorskip("softcontact.torch")

from torch.autograd import gradcheck, gradgradcheck  # noqa: E402

# quaternion entries may be perturbed by less than their 1e-6 normalisation tolerance
EPS = 1e-7
TOL = {"eps": EPS, "atol": 1e-6, "rtol": 1e-4}
TOL2 = {"eps": EPS, "atol": 1e-5, "rtol": 1e-3}


def _t(a):
    return torch.tensor(np.asarray(a, dtype=float), requires_grad=True)


@pytest.mark.parametrize("case", cases.CASES)
def test_step_gradcheck_and_gradgradcheck(case):
    model, x0, U = cases.problem(case)
    x, u = _t(x0), _t(U[0])
    assert gradcheck(lambda a, b: st.step(model, a, b), (x, u), **TOL)
    assert gradgradcheck(lambda a, b: st.step(model, a, b), (x, u), **TOL2)
    y = st.step(model, x, u)
    assert np.array_equal(y.detach().numpy(), model.step(x0, U[0]).x_next)


@pytest.mark.parametrize("case", cases.CASES)
def test_rollout_gradcheck_and_gradgradcheck(case):
    model, x0, U = cases.problem(case)
    x, u = _t(x0), _t(U)
    assert gradcheck(lambda a, b: st.rollout(model, a, b), (x, u), **TOL)
    assert gradgradcheck(lambda a, b: st.rollout(model, a, b), (x, u), **TOL2)
    X = st.rollout(model, x, u)
    assert np.array_equal(X.detach().numpy(), model.rollout(x0, U).states)


def test_rollout_gradient_is_the_adjoint_and_matches_the_steps():
    """The rollout's backward (C adjoint) equals backpropagation through the steps."""
    model, x0, U = cases.problem("box3d")
    x, u = _t(x0), _t(U)
    w = torch.tensor(np.random.default_rng(1).standard_normal((cases.T + 1, model.nx)))
    (st.rollout(model, x, u) * w).sum().backward()
    g1 = (x.grad.clone(), u.grad.clone())
    x.grad = u.grad = None
    xs = [torch.cat([x[:3], x[3:7] / x[3:7].norm(), x[7:]])]  # the rollout reads q / |q|
    for t in range(cases.T):
        xs.append(st.step(model, xs[-1], u[t]))
    (torch.stack(xs) * w).sum().backward()
    np.testing.assert_allclose(g1[0], x.grad, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g1[1], u.grad, rtol=1e-10, atol=1e-12)


def test_ssdf_and_contact_gradcheck():
    cloud = sc.PointCloud.t_shape(spacing=0.004)
    x = _t([[-0.012, -0.0813], [0.05, 0.045], [0.0, 0.0]])
    assert gradcheck(lambda a: st.ssdf(cloud, a, 1.6e-5), (x,), **TOL)
    assert gradgradcheck(lambda a: st.ssdf(cloud, a, 1.6e-5), (x,), **TOL2)
    assert np.array_equal(
        st.ssdf(cloud, x, 1.6e-5).detach().numpy(), sc.ssdf(cloud, x.detach().numpy(), 1.6e-5).phi
    )
    ball, args = cases.contact_case()
    targs = tuple(_t(a) for a in args)
    f = lambda a, b, c, d: st.contact(ball, a, b, ball, c, d)  # noqa: E731
    assert gradcheck(f, targs, eps=EPS, atol=1e-5, rtol=1e-4)
    assert gradgradcheck(f, targs, eps=EPS, atol=1e-4, rtol=1e-3)
    wa, wb = f(*targs)
    r = sc.contact(ball, args[0], args[1], ball, args[2], args[3])
    assert np.array_equal(wa.detach().numpy(), r.wrench_a)
    assert np.array_equal(wb.detach().numpy(), r.wrench_b)


def test_batches_broadcast_and_equal_loops():
    model, x0, U = cases.problem("push-contact")
    rng = np.random.default_rng(2)
    Ub = U + 0.01 * rng.standard_normal((3, 1) + U.shape)  # (3, 1, T, nu)
    x0b = np.stack([x0, x0 + 1e-3])  # (2, nx): broadcast to (3, 2)
    xt, Ut = _t(x0b), _t(Ub)
    X = st.rollout(model, xt, Ut)
    assert X.shape == (3, 2, cases.T + 1, model.nx)
    X.pow(2).sum().backward()
    for i in range(3):
        for j in range(2):
            xi, ui = _t(x0b[j]), _t(Ub[i, 0])
            Xi = st.rollout(model, xi, ui)
            assert torch.equal(Xi, X[i, j].detach())
            Xi.pow(2).sum().backward()
            if j == 0:
                gu0 = ui.grad.clone()
            else:  # U broadcast over the x0 axis: the gradients add
                np.testing.assert_allclose(Ut.grad[i, 0], gu0 + ui.grad, rtol=1e-12, atol=1e-15)
    y = st.step(model, xt, Ut[:, :, 0])  # (2, nx) with (3, 1, nu)
    assert y.shape == (3, 2, model.nx)
    assert torch.equal(y[2, 1], st.step(model, xt[1], Ut[2, 0, 0]))


def test_dtypes_scenes_without_controls_and_inputs_kept():
    scene = sc.Scene(dim=3)
    scene.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    scene.add_body(
        sc.PointCloud.box([0.05, 0.05, 0.05], spacing=0.01),
        mass=1.0,
        pose=[0, 0, 0.06, 1, 0, 0, 0],
        name="box",
    )
    scene.add_contact("box", "floor")
    model = scene.build(dt=0.005, integrator="implicit")
    x0 = model.initial_state()
    x = torch.tensor(x0, requires_grad=True)
    kept = x.detach().clone()
    X = st.rollout(model, x, None, T=20)
    X[-1, 2].backward()
    assert torch.equal(x.detach(), kept)
    assert np.array_equal(X.detach().numpy(), model.rollout(x0, np.zeros((20, 0))).states)
    assert x.grad[2] != 0 and np.isfinite(x.grad.numpy()).all()
    with pytest.raises(ValueError, match="T .the number of steps. is needed"):
        st.rollout(model, x, None)
    x32 = torch.tensor(x0, dtype=torch.float32)
    assert st.step(model, x32).dtype == torch.float32
    # a quaternion within 1e-6 of unit length is normalised
    xs = x0.copy()
    xs[3:7] *= 1 + 5e-7
    np.testing.assert_allclose(
        st.step(model, torch.tensor(xs)).numpy(), model.step(x0).x_next, rtol=0, atol=1e-15
    )


def test_bad_input_names_the_argument():
    model, x0, U = cases.problem("push-contact")
    x = torch.tensor(x0)
    with pytest.raises(ValueError, match=rf"x must have shape \(\.\.\., {model.nx}\)"):
        st.step(model, x[:-1], torch.tensor(U[0]))
    with pytest.raises(ValueError, match=r"u must have shape"):
        st.step(model, x, None)
    with pytest.raises(TypeError, match="model must be a Model"):
        st.step("model", x, torch.tensor(U[0]))
    with pytest.raises(TypeError, match="x must be a real tensor"):
        st.step(model, x.to(torch.complex128), torch.tensor(U[0]))
    with pytest.raises(ValueError, match=r"U must have shape \(\.\.\., T, 3\), got None"):
        st.rollout(model, x, None)
    with pytest.raises(ValueError, match="do not broadcast"):
        st.rollout(model, torch.stack([x, x]), torch.tensor(np.stack([U, U, U])))
    with pytest.raises(ValueError, match="T is 5 but U holds 3 steps"):
        st.rollout(model, x, torch.tensor(U), T=5)
    with pytest.raises(TypeError, match="cloud must be a PointCloud"):
        st.ssdf(None, x[:2], 1e-4)
    with pytest.raises(ValueError, match="eps"):
        st.ssdf(sc.PointCloud.disk(0.02, 0.002), x[:2], -1.0)
    ball, args = cases.contact_case()
    with pytest.raises(TypeError, match="params must be a ContactParams"):
        st.contact(ball, *map(torch.tensor, args[:2]), ball, *map(torch.tensor, args[2:]), 1)


def test_float32_empty_and_bad_rollouts():
    """float32 tensors differentiate through 3D rollouts (the adjoint runs on the float64
    states, whose quaternions the float32 copy rounds off unit length); empty batches and
    horizons; non-finite input named."""
    model, x0, U = cases.problem("box3d")
    grads = []
    for dtype in (torch.float64, torch.float32):
        x = torch.tensor(x0, dtype=dtype, requires_grad=True)
        u = torch.tensor(U, dtype=dtype, requires_grad=True)
        X = st.rollout(model, x, u)
        assert X.dtype == dtype
        (X[-1, :3] ** 2).sum().backward()
        assert x.grad.dtype == u.grad.dtype == dtype
        grads.append(u.grad.double())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6 * grads[0].abs().max())
    x = torch.tensor(x0, requires_grad=True)
    X = st.rollout(model, x.expand(0, model.nx), torch.tensor(U).expand(0, *U.shape))
    assert X.shape == (0, cases.T + 1, model.nx)
    X = st.rollout(model, x, torch.zeros((0, model.nu), dtype=torch.float64))
    X.sum().backward()
    want = np.ones(model.nx)  # X[0] = x0 read through q / |q|: no gradient along q
    want[3:7] -= x0[3:7] * x0[3:7].sum()
    assert X.shape == (1, model.nx)
    np.testing.assert_allclose(x.grad, want, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="x0 must be finite"):
        st.rollout(model, x.detach() * np.nan, torch.tensor(U))
    with pytest.raises(ValueError, match="U must be finite"):
        st.rollout(model, x.detach(), torch.tensor(U) * np.nan)


def test_a_diverging_rollout_raises():
    """A box dropped on a floor 1e9 N/m stiff, Euler steps of 50 ms: it blows up."""
    s = sc.Scene(dim=3)
    s.add_body(sc.PointCloud.halfspace([0, 0, 0], [0, 0, 1]), kind="static", name="floor")
    s.add_body(sc.PointCloud.box([0.05] * 3, 0.02), mass=1.0, pose=[0, 0, 0.06, 1, 0, 0, 0])
    s.add_contact(0, 1, sc.ContactParams(stiffness=1e9))
    with pytest.warns(sc.SoftContactWarning):
        model = s.build(0.05)
    with pytest.raises(sc.DivergenceError, match="trajectory 0: step"):
        st.rollout(model, torch.tensor(model.initial_state()), None, T=20)
