/*
 * py_batch.c - binding of batched steps and rollouts (sc_batch.h): one or several model
 * capsules of one structure, states and controls addressed through index arrays (the
 * Python layer's broadcasting, without copies).
 */
#include <Python.h>
#define NO_IMPORT_ARRAY
#include <numpy/arrayobject.h>
#include <string.h>

#include "py_common.h"

/* the parsed models, inputs and index maps of one call (owned references) */
typedef struct {
    const sc_model **models;
    sc_model_sizes s;
    PyArrayObject *x, *u, *index[3]; /* index: model, x, u (NULL: None) */
    sc_batch_map map;
    npy_intp B;
} batch_args;

static void batch_release(batch_args *a)
{
    int k;
    PyMem_RawFree((void *)a->models);
    Py_XDECREF(a->x);
    Py_XDECREF(a->u);
    for (k = 0; k < 3; k++) {
        Py_XDECREF(a->index[k]);
    }
}

/* the models of a tuple of capsules, all alike the first; 0 with an exception */
static int parse_models(batch_args *a, PyObject *mo)
{
    Py_ssize_t k, n;
    if (!PyTuple_Check(mo) || (n = PyTuple_GET_SIZE(mo)) < 1) {
        PyErr_SetString(PyExc_TypeError, "models must be a non-empty tuple of model capsules");
        return 0;
    }
    a->models = (const sc_model **)PyMem_RawMalloc(sizeof(sc_model *) * (size_t)n);
    if (a->models == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    for (k = 0; k < n; k++) {
        sc_model_sizes s;
        if ((a->models[k] = sc_py_model(PyTuple_GET_ITEM(mo, k), k == 0 ? &a->s : &s)) == NULL) {
            return 0;
        }
        if (k > 0 && !sc_models_alike(a->models[0], a->models[k])) {
            PyErr_Format(PyExc_ValueError,
                         "models[%zd] differs in structure from models[0] (dimension, bodies' "
                         "kinds and actuation, state, control and parameter sizes)",
                         k);
            return 0;
        }
    }
    a->map.models = a->models;
    a->map.nmodel = n;
    return 1;
}

/* index array k (None, or B integers in [0, rows)) of the map; 0 with an exception.  None
   stands for 0..B-1 (rows must then be at least B), or for the one model. */
static int parse_index(batch_args *a, int k, PyObject *obj, npy_intp rows, const char *name)
{
    const ptrdiff_t **slot[3] = {&a->map.model, &a->map.x, &a->map.u};
    const ptrdiff_t *v;
    npy_intp i;
    if (obj == Py_None) {
        if (!(k == 0 && rows == 1) && rows < a->B) {
            PyErr_Format(PyExc_ValueError, "%s: None needs at least %zd rows, got %zd", name,
                         (Py_ssize_t)a->B, (Py_ssize_t)rows);
            return 0;
        }
        *slot[k] = NULL;
        return 1;
    }
    {
        /* integers only (a float, object or too large an integer refused: TypeError), cast
           safely to intp (an unsigned 64-bit array refused) */
        PyArrayObject *raw;
        if (!sc_py_not_masked(obj, name)) {
            return 0;
        }
        raw = (PyArrayObject *)PyArray_FROM_O(obj);
        if (raw == NULL) {
            sc_py_parse_error(name);
            return 0;
        }
        if (PyArray_SIZE(raw) > 0 && !PyTypeNum_ISINTEGER(PyArray_TYPE(raw))) {
            PyErr_Format(PyExc_TypeError, "%s must hold integers, got dtype %S", name,
                         (PyObject *)PyArray_DESCR(raw));
            Py_DECREF(raw);
            return 0;
        }
        a->index[k] =
            (PyArrayObject *)PyArray_FromAny((PyObject *)raw, PyArray_DescrFromType(NPY_INTP), 1, 1,
                                             NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED |
                                                 (PyArray_SIZE(raw) == 0 ? NPY_ARRAY_FORCECAST : 0),
                                             NULL);
        Py_DECREF(raw);
        if (a->index[k] == NULL) {
            sc_py_parse_error(name);
            return 0;
        }
    }
    if (PyArray_DIM(a->index[k], 0) != a->B) {
        PyErr_Format(PyExc_ValueError, "%s must have shape (%zd,), got (%zd,)", name,
                     (Py_ssize_t)a->B, (Py_ssize_t)PyArray_DIM(a->index[k], 0));
        return 0;
    }
    v = (const ptrdiff_t *)PyArray_DATA(a->index[k]);
    for (i = 0; i < a->B; i++) {
        if (v[i] < 0 || v[i] >= rows) {
            PyErr_Format(PyExc_ValueError, "%s must hold indices in [0, %zd), got %zd", name,
                         (Py_ssize_t)rows, (Py_ssize_t)v[i]);
            return 0;
        }
    }
    *slot[k] = v;
    return 1;
}

/* models, x (rows, nx), u (rows, [T,] nu) with u_ndim dimensions and the three index
   arrays; 0 with an exception */
static int parse_batch(batch_args *a, PyObject *const *o, int u_ndim)
{
    npy_intp shp[3];
    if (a->B < 0) {
        PyErr_SetString(PyExc_ValueError, "B must be >= 0");
        return 0;
    }
    if (!parse_models(a, o[0])) {
        return 0;
    }
    shp[0] = -1, shp[1] = a->s.nq + a->s.nv;
    if ((a->x = sc_py_shaped(o[1], "x", 2, shp)) == NULL) {
        return 0;
    }
    shp[1] = u_ndim == 3 ? -1 : a->s.nu, shp[2] = a->s.nu;
    if ((a->u = sc_py_shaped(o[3], "u", u_ndim, shp)) == NULL) {
        return 0;
    }
    return parse_index(a, 0, o[5], (npy_intp)a->map.nmodel, "model_index") &&
           parse_index(a, 1, o[2], PyArray_DIM(a->x, 0), "x_index") &&
           parse_index(a, 2, o[4], PyArray_DIM(a->u, 0), "u_index");
}

PyDoc_STRVAR(step_batch_doc,
             "step_batch(models, B, x (N, nx), x_index, u (M, nu), u_index, model_index, "
             "order=0, params=0, num_threads=1, isa=-1, dense=0) -> (x_next, dx_dx, dx_du, "
             "d2x_dx2, d2x_dxdu, d2x_du2, dx_dp, status): B steps (sc_step_batch), item b of "
             "models[model_index[b]] at x[x_index[b]], u[u_index[b]] (an index None: b, or "
             "the one model); outputs with a leading B, status (B,) int");

static PyObject *py_step_batch(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"models",  "B",           "x",     "x_index", "u",
                             "u_index", "model_index", "order", "params",  "num_threads",
                             "isa",     "dense",       NULL};
    PyObject *o[6];
    int order = 0, params = 0, nthreads = 1, isa = SC_ISA_AUTO, dense = 0, st, k;
    batch_args a;
    sc_options opt;
    sc_py_call call;
    sc_step_out so;
    PyArrayObject *out[7] = {NULL}, *status = NULL;
    double *work = NULL;
    Py_ssize_t B;

    memset(&a, 0, sizeof a);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnOOOOO|iiiii:step_batch", kwlist, &o[0], &B,
                                     &o[1], &o[2], &o[3], &o[4], &o[5], &order, &params, &nthreads,
                                     &isa, &dense)) {
        return sc_py_parse_error("step_batch");
    }
    a.B = (npy_intp)B;
    if (!sc_py_order(order, 2) || !parse_batch(&a, o, 2) ||
        !sc_py_options(isa, dense, nthreads, B, &opt)) {
        goto fail;
    }
    {
        const npy_intp n2 = 2 * a.s.nv, nu = a.s.nu;
        const npy_intp d[7][4] = {{B, a.s.nq + a.s.nv}, {B, n2, n2},     {B, n2, nu},
                                  {B, n2, n2, n2},      {B, n2, n2, nu}, {B, n2, nu, nu},
                                  {B, n2, a.s.np}};
        const int nd[7] = {2, 3, 3, 4, 4, 4, 3};
        const int need[7] = {1,          order >= 1, order >= 1, order >= 2,
                             order >= 2, order >= 2, params != 0};
        for (k = 0; k < 7; k++) {
            if (need[k] && (out[k] = sc_py_zeros(nd[k], d[k])) == NULL) {
                goto fail;
            }
        }
    }
    if ((status = (PyArrayObject *)PyArray_ZEROS(1, &a.B, NPY_INT, 0)) == NULL ||
        (work = sc_py_work(sc_batch_workspace_size(&a.map, order, params != 0, opt.nthreads))) ==
            NULL) {
        goto fail;
    }
    so.x_next = sc_py_data(out[0]);
    so.dx_dx = sc_py_data(out[1]);
    so.dx_du = sc_py_data(out[2]);
    so.d2x_dx2 = sc_py_data(out[3]);
    so.d2x_dxdu = sc_py_data(out[4]);
    so.d2x_du2 = sc_py_data(out[5]);
    so.dx_dp = sc_py_data(out[6]);
    sc_py_release(&call, &opt);
    st = sc_step_batch(&a.map, B, sc_py_data(a.x), sc_py_data(a.u), order, params != 0, &opt, work,
                       &so, (int *)PyArray_DATA(status));
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    work = NULL;
    if (st != SC_OK) {
        sc_py_raise(st, "step_batch", NULL);
        goto fail;
    }
    batch_release(&a);
    return Py_BuildValue("NNNNNNNN", (PyObject *)out[0], sc_py_or_none(out[1]),
                         sc_py_or_none(out[2]), sc_py_or_none(out[3]), sc_py_or_none(out[4]),
                         sc_py_or_none(out[5]), sc_py_or_none(out[6]), (PyObject *)status);
fail:
    PyMem_RawFree(work);
    batch_release(&a);
    for (k = 0; k < 7; k++) {
        Py_XDECREF(out[k]);
    }
    Py_XDECREF(status);
    return NULL;
}

PyDoc_STRVAR(rollout_batch_doc,
             "rollout_batch(models, B, x0 (N, nx), x_index, U (M, T, nu), u_index, "
             "model_index, order=0, num_threads=1, isa=-1, dense=0) -> (X, A, Bu, status, "
             "failed_step): B rollouts (sc_rollout_batch), trajectory b of "
             "models[model_index[b]] from x0[x_index[b]] with U[u_index[b]] (an index None: "
             "b, or the one model)");

static PyObject *py_rollout_batch(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"models",      "B",     "x0",          "x_index", "U",     "u_index",
                             "model_index", "order", "num_threads", "isa",     "dense", NULL};
    PyObject *o[6];
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, dense = 0, st;
    batch_args a;
    sc_options opt;
    sc_py_call call;
    sc_rollout_out ro;
    PyArrayObject *X = NULL, *A = NULL, *Bu = NULL, *status = NULL, *failed = NULL;
    double *work = NULL;
    npy_intp shp[4], T;
    Py_ssize_t B;

    memset(&a, 0, sizeof a);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnOOOOO|iiii:rollout_batch", kwlist, &o[0], &B,
                                     &o[1], &o[2], &o[3], &o[4], &o[5], &order, &nthreads, &isa,
                                     &dense)) {
        return sc_py_parse_error("rollout_batch");
    }
    a.B = (npy_intp)B;
    if (!sc_py_order(order, 1) || !parse_batch(&a, o, 3) ||
        !sc_py_options(isa, dense, nthreads, B, &opt)) {
        goto fail;
    }
    T = PyArray_DIM(a.u, 1);
    shp[0] = B;
    shp[1] = T + 1;
    shp[2] = a.s.nq + a.s.nv;
    if ((X = sc_py_empty(3, shp)) == NULL) {
        goto fail;
    }
    if (order >= 1) {
        shp[1] = T;
        shp[2] = shp[3] = 2 * a.s.nv;
        if ((A = sc_py_zeros(4, shp)) == NULL) {
            goto fail;
        }
        shp[3] = a.s.nu;
        if ((Bu = sc_py_zeros(4, shp)) == NULL) {
            goto fail;
        }
    }
    if ((status = (PyArrayObject *)PyArray_SimpleNew(1, &a.B, NPY_INT)) == NULL ||
        (failed = (PyArrayObject *)PyArray_SimpleNew(1, &a.B, NPY_INTP)) == NULL ||
        (work = sc_py_work(sc_batch_workspace_size(&a.map, order, 0, opt.nthreads))) == NULL) {
        goto fail;
    }
    ro.X = sc_py_data(X);
    ro.A = sc_py_data(A);
    ro.Bu = sc_py_data(Bu);
    ro.status = (int *)PyArray_DATA(status);
    ro.failed = (ptrdiff_t *)PyArray_DATA(failed);
    sc_py_release(&call, &opt);
    st = sc_rollout_batch(&a.map, B, T, sc_py_data(a.x), sc_py_data(a.u), order, &opt, work, &ro);
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    work = NULL;
    if (st != SC_OK) {
        sc_py_raise(st, "rollout_batch", NULL);
        goto fail;
    }
    batch_release(&a);
    return Py_BuildValue("NNNNN", (PyObject *)X, sc_py_or_none(A), sc_py_or_none(Bu),
                         (PyObject *)status, (PyObject *)failed);
fail:
    PyMem_RawFree(work);
    batch_release(&a);
    Py_XDECREF(X);
    Py_XDECREF(A);
    Py_XDECREF(Bu);
    Py_XDECREF(status);
    Py_XDECREF(failed);
    return NULL;
}

PyMethodDef sc_py_batch_methods[] = {
    {"step_batch", (PyCFunction)(void (*)(void))py_step_batch, METH_VARARGS | METH_KEYWORDS,
     step_batch_doc},
    {"rollout_batch", (PyCFunction)(void (*)(void))py_rollout_batch, METH_VARARGS | METH_KEYWORDS,
     rollout_batch_doc},
    {NULL, NULL, 0, NULL},
};
