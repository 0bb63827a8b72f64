"""Pure-NumPy reference (test oracle) of the inner loops of iLQR / DDP that run in C
(sc_ilqr.c): the backward Riccati pass with box-constrained controls, and the
closed-loop forward rollout.  Written from the formulas of softcontact.optimize.ddp's
module docstring, with NumPy's Cholesky factor and symmetric eigendecomposition."""

import numpy as np

ARMIJO = 1e-4


def box_qp(H, g, lo, hi, x0, iters=100):
    """Minimize ``g.x + x.H.x / 2`` for ``lo <= x <= hi`` by projected Newton from ``x0``:
    ``(x, free, L)``, L the Cholesky factor of H on the free controls (None when that
    block is not positive definite)."""
    x = np.clip(x0, lo, hi)
    n = len(g)
    free = np.ones(n, dtype=bool)
    f = float(g @ x + 0.5 * x @ H @ x)
    for _ in range(iters):
        grad = g + H @ x
        free = ~(((x <= lo) & (grad > 0)) | ((x >= hi) & (grad < 0)))
        if not free.any():
            return x, free, np.zeros((0, 0))
        try:
            L = np.linalg.cholesky(H[np.ix_(free, free)])
        except np.linalg.LinAlgError:
            return x, free, None
        d = np.zeros(n)
        d[free] = -np.linalg.solve(L.T, np.linalg.solve(L, grad[free]))
        if np.max(np.abs(d)) < 1e-13 * (1.0 + np.max(np.abs(x))):
            break
        step = 1.0
        while step > 1e-10:
            xn = np.clip(x + step * d, lo, hi)
            fn = float(g @ xn + 0.5 * xn @ H @ xn)
            if fn <= f + ARMIJO * float(grad @ (xn - x)):
                break
            step *= 0.5
        else:
            break
        if f - fn <= 1e-15 * (1.0 + abs(f)):
            x, f = xn, fn
            break
        x, f = xn, fn
    grad = g + H @ x
    free = ~(((x <= lo) & (grad > 0)) | ((x >= hi) & (grad < 0)))
    try:
        L = np.linalg.cholesky(H[np.ix_(free, free)]) if free.any() else np.zeros((0, 0))
    except np.linalg.LinAlgError:
        L = None
    return x, free, L


def backward(A, B, g, H, F2, U, lo, hi, mu):
    """The backward pass: ``(k, K, dv1, dv2)``, or None if some Quu is not definite.
    ``F2`` = (fxx, fxu, fuu) stacked over the steps for DDP, None for Gauss-Newton."""
    T, n, nu = B.shape
    k = np.zeros((T, nu))
    K = np.zeros((T, nu, n))
    Vx = g[T][:n].copy()
    Vxx = H[T][:n, :n].copy()
    dv1 = dv2 = 0.0
    for t in range(T - 1, -1, -1):
        At, Bt, gz, Hz = A[t], B[t], g[t], H[t]
        Qx = gz[:n] + At.T @ Vx
        Qu = gz[n:] + Bt.T @ Vx
        Qxx = Hz[:n, :n] + At.T @ Vxx @ At
        Qux = Hz[n:, :n] + Bt.T @ Vxx @ At
        Quu = Hz[n:, n:] + Bt.T @ Vxx @ Bt
        if F2 is not None:
            Qxx = Qxx + np.tensordot(Vx, F2[0][t], axes=1)
            Qux = Qux + np.tensordot(Vx, F2[1][t], axes=1).T
            Quu = Quu + np.tensordot(Vx, F2[2][t], axes=1)
        Quu = 0.5 * (Quu + Quu.T)
        if F2 is not None:
            w, V = np.linalg.eigh(Quu)
            floor = 1e-6 * max(float(np.max(np.abs(w))), 1e-300)
            if w[0] < floor:
                Quu = (V * np.maximum(np.abs(w), floor)) @ V.T
        du, free, L = box_qp(Quu + mu * np.eye(nu), Qu, lo[t] - U[t], hi[t] - U[t], np.zeros(nu))
        if L is None:
            return None
        Kt = np.zeros((nu, n))
        if free.any():
            Kt[free] = -np.linalg.solve(L.T, np.linalg.solve(L, Qux[free]))
        k[t], K[t] = du, Kt
        dv1 += float(du @ Qu)
        dv2 += 0.5 * float(du @ Quu @ du)
        Vx = Qx + Kt.T @ Quu @ du + Kt.T @ Qu + Qux.T @ du
        Vxx = Qxx + Kt.T @ Quu @ Kt + Kt.T @ Qux + Qux.T @ Kt
        Vxx = 0.5 * (Vxx + Vxx.T)
        if F2 is not None:
            w, V = np.linalg.eigh(Vxx)
            if w[0] < 0.0:
                Vxx = (V * np.maximum(w, 0.0)) @ V.T
    return k, K, dv1, dv2


def rollout_policy(model, X, U, k, K, alpha, lo, hi):
    """``u_t = clip(U_t + alpha k_t + K_t (x'_t (-) X_t))`` along ``x'`` by
    ``model.step``: ``(Xn, Un)``, or None if a step fails (DivergenceError, or a control
    outside the valid range)."""
    T = len(U)
    Xn = np.empty_like(X)
    Un = np.empty_like(U)
    Xn[0] = X[0]
    for t in range(T):
        dx = model.difference(Xn[t], X[t])
        Un[t] = np.clip(U[t] + alpha * k[t] + K[t] @ dx, lo[t], hi[t])
        try:
            Xn[t + 1] = model.step(Xn[t], Un[t], order=0, num_threads=1).x_next
        except (ValueError, ArithmeticError):
            return None
    return Xn, Un
