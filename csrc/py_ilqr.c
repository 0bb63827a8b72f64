/*
 * py_ilqr.c - binding of the backward pass of iLQR / DDP (sc_ilqr.h); the closed-loop
 * forward rollout, which needs a model, is in py_model.c.
 */
#include <Python.h>
#define NO_IMPORT_ARRAY
#include <numpy/arrayobject.h>

#include "py_common.h"

PyDoc_STRVAR(ilqr_backward_doc,
             "ilqr_backward(A, B, g, H, fxx, fxu, fuu, U, lo, hi, mu) -> (k, K, dv1, dv2) or "
             "None: the backward pass of sc_ilqr_backward; A (T, n, n), B (T, n, nu), g (T + 1, "
             "n + nu), H (T + 1, n + nu, n + nu), fxx/fxu/fuu (T, n, n, n) / (T, n, n, nu) / (T, "
             "n, nu, nu) or all None (Gauss-Newton), U/lo/hi (T, nu); None when some Quu is not "
             "definite");

static PyObject *py_ilqr_backward(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *in[10];
    static const char *names[10] = {"A", "B", "g", "H", "fxx", "fxu", "fuu", "U", "lo", "hi"};
    PyArrayObject *a[10] = {NULL}, *k = NULL, *K = NULL;
    double mu, *work = NULL;
    npy_intp T, n, nu, shp[4];
    sc_ilqr_expansion e;
    sc_ilqr_policy pol;
    int i, st, ddp;
    PyObject *result = NULL;

    if (!PyArg_ParseTuple(args, "OOOOOOOOOOd:ilqr_backward", &in[0], &in[1], &in[2], &in[3], &in[4],
                          &in[5], &in[6], &in[7], &in[8], &in[9], &mu)) {
        return NULL;
    }
    if (!isfinite(mu) || mu < 0.0) {
        PyErr_Format(PyExc_ValueError, "ilqr_backward: mu must be finite and >= 0, got %R",
                     PyTuple_GET_ITEM(args, 10));
        return NULL;
    }
    ddp = in[4] != Py_None;
    if (ddp != (in[5] != Py_None) || ddp != (in[6] != Py_None)) {
        PyErr_SetString(PyExc_ValueError, "ilqr_backward: fxx, fxu and fuu: all or none");
        return NULL;
    }
    shp[0] = shp[1] = shp[2] = -1;
    if ((a[0] = sc_py_shaped(in[0], "A", 3, shp)) == NULL) {
        goto done;
    }
    T = PyArray_DIM(a[0], 0);
    n = PyArray_DIM(a[0], 1);
    shp[0] = T, shp[1] = n, shp[2] = -1;
    if ((a[1] = sc_py_shaped(in[1], "B", 3, shp)) == NULL) {
        goto done;
    }
    nu = PyArray_DIM(a[1], 2);
    if (n < 1 || PyArray_DIM(a[0], 2) != n) {
        PyErr_SetString(PyExc_ValueError, "ilqr_backward: A must have shape (T, n, n), n >= 1");
        goto done;
    }
    shp[0] = T + 1, shp[1] = n + nu, shp[2] = n + nu;
    if ((a[2] = sc_py_shaped(in[2], names[2], 2, shp)) == NULL ||
        (a[3] = sc_py_shaped(in[3], names[3], 3, shp)) == NULL) {
        goto done;
    }
    if (ddp) {
        shp[0] = T, shp[1] = n, shp[2] = n, shp[3] = n;
        for (i = 4; i < 7; i++) {
            shp[2] = i == 6 ? nu : n;
            shp[3] = i == 4 ? n : nu;
            if ((a[i] = sc_py_shaped(in[i], names[i], 4, shp)) == NULL) {
                goto done;
            }
        }
    }
    shp[0] = T, shp[1] = nu;
    for (i = 7; i < 10; i++) {
        if ((a[i] = sc_py_shaped(in[i], names[i], 2, shp)) == NULL) {
            goto done;
        }
    }
    shp[0] = T, shp[1] = nu, shp[2] = n;
    if ((k = sc_py_zeros(2, shp)) == NULL || (K = sc_py_zeros(3, shp)) == NULL ||
        (work = sc_py_work(sc_ilqr_backward_workspace_size((int)n, (int)nu))) == NULL) {
        goto done;
    }
    e.T = T, e.n = (int)n, e.nu = (int)nu;
    e.A = sc_py_data(a[0]), e.B = sc_py_data(a[1]), e.g = sc_py_data(a[2]);
    e.H = sc_py_data(a[3]), e.fxx = sc_py_data(a[4]), e.fxu = sc_py_data(a[5]);
    e.fuu = sc_py_data(a[6]), e.U = sc_py_data(a[7]), e.lo = sc_py_data(a[8]);
    e.hi = sc_py_data(a[9]);
    pol.k = sc_py_data(k), pol.K = sc_py_data(K);
    Py_BEGIN_ALLOW_THREADS;
    st = sc_ilqr_backward(&e, mu, work, &pol);
    Py_END_ALLOW_THREADS;
    if (st != SC_OK) {
        sc_py_raise(st, "ilqr_backward", "mu");
        goto done;
    }
    if (!pol.definite) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = Py_BuildValue("OOdd", (PyObject *)k, (PyObject *)K, pol.dv1, pol.dv2);
done:
    for (i = 0; i < 10; i++) {
        Py_XDECREF(a[i]);
    }
    Py_XDECREF(k);
    Py_XDECREF(K);
    PyMem_RawFree(work);
    return result;
}

PyMethodDef sc_py_ilqr_methods[] = {
    {"ilqr_backward", (PyCFunction)py_ilqr_backward, METH_VARARGS, ilqr_backward_doc},
    {NULL, NULL, 0, NULL},
};
