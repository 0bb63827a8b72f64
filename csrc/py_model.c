/*
 * py_model.c - binding of models (sc_model.h): a model as a capsule owning copies of every
 * array, its step, rollouts, inverse dynamics, energy and momentum.
 */
#include <Python.h>
#define NO_IMPORT_ARRAY
#include <numpy/arrayobject.h>
#include <string.h>

#include "py_common.h"

#define MODEL_CAPSULE "softcontact._core.model"

/* one allocation: the sc_model, its bodies and pairs, and copies of every array */
typedef struct {
    sc_model m;
    sc_body *bodies;
    sc_pair *pairs;
    double *data;
} model_box;

static void model_free(PyObject *cap)
{
    PyMem_RawFree(PyCapsule_GetPointer(cap, MODEL_CAPSULE));
}

/* the model of a capsule and its sizes, or NULL with TypeError */
static const sc_model *get_model(PyObject *obj, sc_model_sizes *s)
{
    model_box *box;
    if (!PyCapsule_IsValid(obj, MODEL_CAPSULE)) {
        PyErr_SetString(PyExc_TypeError, "model must be a model capsule from model_new");
        return NULL;
    }
    box = (model_box *)PyCapsule_GetPointer(obj, MODEL_CAPSULE);
    if (box != NULL) {
        sc_model_check(&box->m, s);
    }
    return box ? &box->m : NULL;
}

const sc_model *sc_py_model(PyObject *obj, sc_model_sizes *s)
{
    return get_model(obj, s);
}

/* model_new's arguments as arrays (owned references) */
typedef struct {
    int dim, integrator;
    double dt;
    PyObject *clouds, *supports; /* borrowed tuples, one entry per body */
    PyArrayObject *g, *kinds, *act, *mass, *inr, *pose, *counts, *pairs, *pp;
    PyObject *limits_in;   /* borrowed: None or (nb, 2) max_speed, max_spin */
    PyArrayObject *limits; /* NULL for None */
    PyArrayObject *per_body[3 * SC_MODEL_MAX_BODIES]; /* cloud, support points, weights */
    npy_intp nb, np_;
    size_t ndata; /* doubles of every copied array */
} model_args;

static void args_release(model_args *a)
{
    PyArrayObject **own[] = {&a->g,    &a->kinds,  &a->act,   &a->mass, &a->inr,
                             &a->pose, &a->counts, &a->pairs, &a->pp,   &a->limits};
    size_t k;
    for (k = 0; k < sizeof own / sizeof own[0]; k++) {
        Py_CLEAR(*own[k]);
    }
    for (k = 0; k < 3 * SC_MODEL_MAX_BODIES; k++) {
        Py_CLEAR(a->per_body[k]);
    }
}

/* body k's packed cloud and support arrays into a->per_body; 0 with an exception */
static int parse_body(model_args *a, npy_intp k)
{
    PyObject *cl = PyTuple_GET_ITEM(a->clouds, k), *sp = PyTuple_GET_ITEM(a->supports, k);
    const double cnt = ((const double *)PyArray_DATA(a->counts))[k];
    PyArrayObject **arr = a->per_body + 3 * k;
    sc_packed_cloud view;
    npy_intp s2[2] = {-1, 2}, s1[1];
    if ((arr[0] = sc_py_doubles(cl, "clouds[k]")) == NULL ||
        (cnt > 0 && !sc_py_packed(arr[0], (Py_ssize_t)cnt, a->dim, "clouds[k]", &view))) {
        return 0;
    }
    a->ndata += (size_t)PyArray_SIZE(arr[0]);
    if (sp == Py_None) {
        return 1;
    }
    if (!PyTuple_Check(sp) || PyTuple_GET_SIZE(sp) != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "a support must be (points, weights, mu, g, slip_velocity)");
        return 0;
    }
    if ((arr[1] = sc_py_shaped(PyTuple_GET_ITEM(sp, 0), "support points", 2, s2)) == NULL) {
        return 0;
    }
    s1[0] = PyArray_DIM(arr[1], 0);
    if ((arr[2] = sc_py_shaped(PyTuple_GET_ITEM(sp, 1), "support weights", 1, s1)) == NULL) {
        return 0;
    }
    {
        /* the valid range of the points (sc_model.h: not checked by sc_model_check) */
        const double *pts = (const double *)PyArray_DATA(arr[1]);
        npy_intp i;
        for (i = 0; i < 2 * s1[0]; i++) {
            if (!sc_py_in_range(pts[i], "support points", -SC_COORD_MAX, SC_COORD_MAX, " m")) {
                return 0;
            }
        }
    }
    a->ndata += (size_t)(3 * s1[0]);
    return 1;
}

/* every argument of model_new checked for shape; 0 with an exception */
static int parse_model(model_args *a, PyObject *const *o)
{
    npy_intp shp[2] = {3, 0}, k;
    if ((a->g = sc_py_shaped(o[0], "gravity", 1, shp)) == NULL ||
        (a->mass = sc_py_doubles(o[3], "masses")) == NULL) {
        return 0;
    }
    /* the dimension read only once there is one: a 0-d array has none */
    a->nb = PyArray_NDIM(a->mass) == 1 ? PyArray_DIM(a->mass, 0) : 0;
    if (a->nb < 1 || a->nb > SC_MODEL_MAX_BODIES) {
        PyErr_Format(PyExc_ValueError,
                     "masses must have shape (nbody,): a model has 1..%d bodies, got %d "
                     "dimension(s)",
                     SC_MODEL_MAX_BODIES, PyArray_NDIM(a->mass));
        return 0;
    }
    shp[0] = a->nb;
    shp[1] = 9;
    if ((a->kinds = sc_py_shaped(o[1], "kinds", 1, shp)) == NULL ||
        (a->act = sc_py_shaped(o[2], "actuated", 1, shp)) == NULL ||
        (a->counts = sc_py_shaped(o[6], "counts", 1, shp)) == NULL ||
        (a->inr = sc_py_shaped(o[4], "inertias", 2, shp)) == NULL) {
        return 0;
    }
    shp[1] = 7;
    if ((a->pose = sc_py_shaped(o[5], "poses", 2, shp)) == NULL) {
        return 0;
    }
    shp[1] = 2;
    if (a->limits_in != Py_None &&
        (a->limits = sc_py_shaped(a->limits_in, "limits", 2, shp)) == NULL) {
        return 0;
    }
    if (!PyTuple_Check(a->clouds) || PyTuple_GET_SIZE(a->clouds) != a->nb ||
        !PyTuple_Check(a->supports) || PyTuple_GET_SIZE(a->supports) != a->nb) {
        PyErr_SetString(PyExc_TypeError, "clouds and supports must be tuples, one per body");
        return 0;
    }
    shp[0] = -1;
    shp[1] = 2;
    if ((a->pairs = sc_py_shaped(o[7], "pairs", 2, shp)) == NULL) {
        return 0;
    }
    a->np_ = PyArray_DIM(a->pairs, 0);
    shp[0] = a->np_;
    shp[1] = 7;
    if ((a->pp = sc_py_shaped(o[8], "pair_params", 2, shp)) == NULL) {
        return 0;
    }
    for (k = 0; k < a->nb; k++) {
        if (!parse_body(a, k)) {
            return 0;
        }
    }
    return 1;
}

/* body k of the box from the arguments, its arrays copied at box->data + *off; 0 with an
   exception */
static int fill_body(model_box *box, const model_args *a, npy_intp k, size_t *off)
{
    sc_body *b = box->bodies + k;
    const double cnt = ((const double *)PyArray_DATA(a->counts))[k];
    PyObject *sp = PyTuple_GET_ITEM(a->supports, k);
    PyArrayObject *const *arr = a->per_body + 3 * k;
    const size_t len = (size_t)PyArray_SIZE(arr[0]);
    b->kind = (int)((const double *)PyArray_DATA(a->kinds))[k];
    b->actuated = ((const double *)PyArray_DATA(a->act))[k] != 0.0;
    b->mass = ((const double *)PyArray_DATA(a->mass))[k];
    memcpy(b->inertia, (const double *)PyArray_DATA(a->inr) + 9 * k, 9 * sizeof(double));
    memcpy(b->pose, (const double *)PyArray_DATA(a->pose) + 7 * k, 7 * sizeof(double));
    if (a->limits != NULL) {
        b->max_speed = ((const double *)PyArray_DATA(a->limits))[2 * k];
        b->max_spin = ((const double *)PyArray_DATA(a->limits))[2 * k + 1];
    }
    memcpy(box->data + *off, PyArray_DATA(arr[0]), len * sizeof(double));
    if (cnt > 0) {
        sc_cloud_view(a->dim, (ptrdiff_t)cnt, box->data + *off, &b->cloud);
    } else {
        b->cloud.dim = a->dim; /* a body without geometry */
    }
    *off += len;
    if (sp != Py_None) {
        const npy_intp ns = PyArray_DIM(arr[1], 0);
        b->nsupport = ns;
        memcpy(box->data + *off, PyArray_DATA(arr[1]), 2 * (size_t)ns * sizeof(double));
        b->support_points = box->data + *off;
        *off += 2 * (size_t)ns;
        memcpy(box->data + *off, PyArray_DATA(arr[2]), (size_t)ns * sizeof(double));
        b->support_weights = box->data + *off;
        *off += (size_t)ns;
        b->support_friction = PyFloat_AsDouble(PyTuple_GET_ITEM(sp, 2));
        b->support_gravity = PyFloat_AsDouble(PyTuple_GET_ITEM(sp, 3));
        b->support_slip = PyFloat_AsDouble(PyTuple_GET_ITEM(sp, 4));
        if (PyErr_Occurred()) {
            sc_py_parse_error("model_new: a support's mu, g or slip_velocity");
            return 0;
        }
    }
    return 1;
}

/* the model in one allocation, or NULL with an exception */
static model_box *build_model(const model_args *a)
{
    const size_t nps = (size_t)(a->np_ > 0 ? a->np_ : 1), nb = (size_t)a->nb;
    model_box *box =
        (model_box *)PyMem_RawMalloc(sizeof(model_box) + sizeof(sc_body) * nb +
                                     sizeof(sc_pair) * nps + sizeof(double) * (a->ndata + 1));
    size_t off = 0;
    npy_intp k;
    if (box == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memset(box, 0, sizeof(model_box) + sizeof(sc_body) * nb);
    box->bodies = (sc_body *)(box + 1);
    box->pairs = (sc_pair *)(box->bodies + nb);
    box->data = (double *)(box->pairs + nps);
    box->m.dim = a->dim;
    box->m.dt = a->dt;
    box->m.integrator = a->integrator;
    box->m.nbody = (int)a->nb;
    box->m.npair = (int)a->np_;
    box->m.bodies = box->bodies;
    box->m.pairs = box->pairs;
    memcpy(box->m.gravity, PyArray_DATA(a->g), 3 * sizeof(double));
    for (k = 0; k < a->nb; k++) {
        if (!fill_body(box, a, k, &off)) {
            PyMem_RawFree(box);
            return NULL;
        }
    }
    for (k = 0; k < a->np_; k++) {
        const double *pr = (const double *)PyArray_DATA(a->pairs) + 2 * k;
        const double *q = (const double *)PyArray_DATA(a->pp) + 7 * k;
        sc_pair *p = box->pairs + k;
        p->a = (int)pr[0];
        p->b = (int)pr[1];
        p->prm.eps = q[0];
        p->prm.eps_c = q[1];
        p->prm.stiffness = q[2];
        p->prm.beta = q[3];
        p->prm.damping = q[4];
        p->prm.friction = q[5];
        p->prm.slip_velocity = q[6];
    }
    if (sc_model_check(&box->m, NULL) != SC_OK) {
        PyErr_SetString(PyExc_ValueError,
                        "model_new: inconsistent model (sc_model_check: a kind, index, mass, "
                        "inertia, gravity, cloud, support or contact parameter invalid or out "
                        "of its valid range)");
        PyMem_RawFree(box);
        return NULL;
    }
    return box;
}

PyDoc_STRVAR(model_new_doc,
             "model_new(dim, dt, gravity, kinds, actuated, masses, inertias, poses, clouds, "
             "counts, supports, pairs, pair_params, integrator=0, limits=None) -> capsule\n\n"
             "integrator: 0 semi-implicit Euler, 1 linearly implicit (sc_model.h); limits: "
             "(nbody, 2) max_speed, max_spin of sc_body (0: none)");

static PyObject *py_model_new(PyObject *Py_UNUSED(self), PyObject *args)
{
    static char *names[] = {"dim",         "dt",         "gravity", "kinds",  "actuated", "masses",
                            "inertias",    "poses",      "clouds",  "counts", "supports", "pairs",
                            "pair_params", "integrator", "limits",  NULL};
    model_args a;
    PyObject *o[9], *cap = NULL;
    model_box *box = NULL;
    memset(&a, 0, sizeof a);
    a.limits_in = Py_None;
    if (!sc_py_no_masked_args(args, NULL, names) ||
        !PyArg_ParseTuple(args, "idOOOOOOOOOOO|iO:model_new", &a.dim, &a.dt, &o[0], &o[1], &o[2],
                          &o[3], &o[4], &o[5], &a.clouds, &o[6], &a.supports, &o[7], &o[8],
                          &a.integrator, &a.limits_in)) {
        return sc_py_parse_error("model_new");
    }
    if (a.integrator != SC_INTEGRATOR_EULER && a.integrator != SC_INTEGRATOR_IMPLICIT) {
        PyErr_SetString(PyExc_ValueError, "integrator must be 0 (euler) or 1 (implicit)");
        return NULL;
    }
    if (!sc_py_in_range(a.dt, "dt", SC_DT_MIN, SC_DT_MAX, " s")) {
        return NULL;
    }
    if (parse_model(&a, o) && (box = build_model(&a)) != NULL) {
        cap = PyCapsule_New(box, MODEL_CAPSULE, model_free);
        if (cap == NULL) {
            PyMem_RawFree(box);
        }
    }
    args_release(&a);
    return cap;
}

PyDoc_STRVAR(model_sizes_doc, "model_sizes(model) -> (nq, nv, nu, np, nmove)");

static PyObject *py_model_sizes(PyObject *Py_UNUSED(self), PyObject *arg)
{
    sc_model_sizes s;
    if (get_model(arg, &s) == NULL) {
        return NULL;
    }
    return Py_BuildValue("iiiii", s.nq, s.nv, s.nu, s.np, s.nmove);
}

PyDoc_STRVAR(step_doc, "step(model, x, u, order=0, params=0, num_threads=1, isa=-1, dense=0) "
                       "-> (x_next, dx_dx, dx_du, d2x_dx2, d2x_dxdu, d2x_du2, dx_dp)");

static PyObject *py_step(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"model",       "x",   "u",     "order", "params",
                             "num_threads", "isa", "dense", NULL};
    PyObject *mo, *xo, *uo;
    int order = 0, params = 0, nthreads = 1, isa = SC_ISA_AUTO, dense = 0, st, k;
    const sc_model *m;
    sc_model_sizes s;
    sc_options o;
    sc_py_call call;
    sc_step_out so;
    PyArrayObject *x = NULL, *u = NULL, *out[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    double *work = NULL;
    npy_intp shp[1];

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|iiiii:step", kwlist, &mo, &xo, &uo, &order,
                                     &params, &nthreads, &isa, &dense)) {
        return sc_py_parse_error("step");
    }
    if ((m = get_model(mo, &s)) == NULL || !sc_py_order(order, 2) ||
        !sc_py_options(isa, dense, nthreads, PY_SSIZE_T_MAX, &o)) {
        return NULL;
    }
    shp[0] = s.nq + s.nv;
    if ((x = sc_py_shaped(xo, "x", 1, shp)) == NULL) {
        goto fail;
    }
    shp[0] = s.nu;
    if ((u = sc_py_shaped(uo, "u", 1, shp)) == NULL) {
        goto fail;
    }
    {
        const npy_intp n2 = 2 * s.nv, nu = s.nu;
        const npy_intp d[7][3] = {{s.nq + s.nv}, {n2, n2},     {n2, nu},  {n2, n2, n2},
                                  {n2, n2, nu},  {n2, nu, nu}, {n2, s.np}};
        const int nd[7] = {1, 2, 2, 3, 3, 3, 2};
        const int need[7] = {1,          order >= 1, order >= 1, order >= 2,
                             order >= 2, order >= 2, params != 0};
        for (k = 0; k < 7; k++) {
            if (need[k] && (out[k] = sc_py_zeros(nd[k], d[k])) == NULL) {
                goto fail;
            }
        }
    }
    if ((work = sc_py_work(sc_step_workspace_size(m, order, params != 0, o.nthreads))) == NULL) {
        goto fail;
    }
    so.x_next = sc_py_data(out[0]);
    so.dx_dx = sc_py_data(out[1]);
    so.dx_du = sc_py_data(out[2]);
    so.d2x_dx2 = sc_py_data(out[3]);
    so.d2x_dxdu = sc_py_data(out[4]);
    so.d2x_du2 = sc_py_data(out[5]);
    so.dx_dp = sc_py_data(out[6]);
    sc_py_release(&call, &o);
    st = sc_step(m, sc_py_data(x), sc_py_data(u), order, params != 0, &o, work, &so);
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    if (st == SC_EDIVERGED) {
        /* the new state is kept on the exception, for the message naming the body */
        PyObject *e = PyObject_CallFunction(sc_py_DivergenceError, "sO",
                                            "step: the simulation diverged", (PyObject *)out[0]);
        if (e != NULL) {
            PyErr_SetObject(sc_py_DivergenceError, e);
            Py_DECREF(e);
        }
        goto fail;
    }
    if (st != SC_OK) {
        sc_py_raise(st, "step", "x and u");
        goto fail;
    }
    Py_DECREF(x);
    Py_DECREF(u);
    return Py_BuildValue("NNNNNNN", (PyObject *)out[0], sc_py_or_none(out[1]),
                         sc_py_or_none(out[2]), sc_py_or_none(out[3]), sc_py_or_none(out[4]),
                         sc_py_or_none(out[5]), sc_py_or_none(out[6]));
fail:
    Py_XDECREF(x);
    Py_XDECREF(u);
    for (k = 0; k < 7; k++) {
        Py_XDECREF(out[k]);
    }
    return NULL;
}

PyDoc_STRVAR(rollout_doc, "rollout(model, x0 (B, nx), U (B, T, nu), order=0, num_threads=1, "
                          "isa=-1, dense=0) -> (X, A, Bu, status, failed_step)");

static PyObject *py_rollout(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"model", "x0", "U", "order", "num_threads", "isa", "dense", NULL};
    PyObject *mo, *xo, *uo;
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, dense = 0, st;
    const sc_model *m;
    sc_model_sizes s;
    sc_options o;
    sc_py_call call;
    sc_rollout_out ro;
    PyArrayObject *x0 = NULL, *U = NULL, *X = NULL, *A = NULL, *Bu = NULL, *status = NULL,
                  *failed = NULL;
    double *work = NULL;
    npy_intp shp[4], B, T;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|iiii:rollout", kwlist, &mo, &xo, &uo, &order,
                                     &nthreads, &isa, &dense)) {
        return sc_py_parse_error("rollout");
    }
    if ((m = get_model(mo, &s)) == NULL || !sc_py_order(order, 1)) {
        return NULL;
    }
    shp[0] = -1;
    shp[1] = s.nq + s.nv;
    if ((x0 = sc_py_shaped(xo, "x0", 2, shp)) == NULL) {
        goto fail;
    }
    B = PyArray_DIM(x0, 0);
    shp[0] = B;
    shp[1] = -1;
    shp[2] = s.nu;
    if ((U = sc_py_shaped(uo, "U", 3, shp)) == NULL ||
        !sc_py_options(isa, dense, nthreads, B, &o)) {
        goto fail;
    }
    T = PyArray_DIM(U, 1);
    shp[1] = T + 1;
    shp[2] = s.nq + s.nv;
    if ((X = sc_py_empty(3, shp)) == NULL) {
        goto fail;
    }
    if (order >= 1) {
        shp[1] = T;
        shp[2] = shp[3] = 2 * s.nv;
        if ((A = sc_py_zeros(4, shp)) == NULL) {
            goto fail;
        }
        shp[3] = s.nu;
        if ((Bu = sc_py_zeros(4, shp)) == NULL) {
            goto fail;
        }
    }
    if ((status = (PyArrayObject *)PyArray_SimpleNew(1, &B, NPY_INT)) == NULL ||
        (failed = (PyArrayObject *)PyArray_SimpleNew(1, &B, NPY_INTP)) == NULL ||
        (work = sc_py_work((ptrdiff_t)o.nthreads * sc_step_workspace_size(m, order, 0, 1))) ==
            NULL) {
        goto fail;
    }
    ro.X = sc_py_data(X);
    ro.A = sc_py_data(A);
    ro.Bu = sc_py_data(Bu);
    ro.status = (int *)PyArray_DATA(status);
    ro.failed = (ptrdiff_t *)PyArray_DATA(failed);
    sc_py_release(&call, &o);
    st = sc_rollout(m, B, T, sc_py_data(x0), sc_py_data(U), order, &o, work, &ro);
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    if (st != SC_OK) {
        sc_py_raise(st, "rollout", NULL);
        goto fail;
    }
    Py_DECREF(x0);
    Py_DECREF(U);
    return Py_BuildValue("NNNNN", (PyObject *)X, sc_py_or_none(A), sc_py_or_none(Bu),
                         (PyObject *)status, (PyObject *)failed);
fail:
    Py_XDECREF(x0);
    Py_XDECREF(U);
    Py_XDECREF(X);
    Py_XDECREF(A);
    Py_XDECREF(Bu);
    Py_XDECREF(status);
    Py_XDECREF(failed);
    return NULL;
}

PyDoc_STRVAR(rollout_vjp_doc,
             "rollout_vjp(model, X (B, T + 1, nx), U (B, T, nu), GX (B, T + 1, nx), num_threads=1, "
             "isa=-1, dense=0) -> (gx0 (B, nx), gU (B, T, nu), status (B,)): the adjoint of "
             "sc_rollout_vjp");

static PyObject *py_rollout_vjp(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"model", "X", "U", "GX", "num_threads", "isa", "dense", NULL};
    PyObject *mo, *xo, *uo, *go;
    int nthreads = 1, isa = SC_ISA_AUTO, dense = 0, st;
    const sc_model *m;
    sc_model_sizes s;
    sc_options o;
    sc_py_call call;
    PyArrayObject *X = NULL, *U = NULL, *GX = NULL, *gx0 = NULL, *gU = NULL, *status = NULL;
    double *work = NULL;
    npy_intp shp[3], B, T;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO|iii:rollout_vjp", kwlist, &mo, &xo, &uo, &go,
                                     &nthreads, &isa, &dense)) {
        return sc_py_parse_error("rollout_vjp");
    }
    if ((m = get_model(mo, &s)) == NULL) {
        return NULL;
    }
    shp[0] = -1;
    shp[1] = -1;
    shp[2] = s.nq + s.nv;
    if ((X = sc_py_shaped(xo, "X", 3, shp)) == NULL) {
        goto fail;
    }
    B = PyArray_DIM(X, 0);
    T = PyArray_DIM(X, 1) - 1;
    if (T < 0) {
        PyErr_SetString(PyExc_ValueError, "rollout_vjp: X must hold at least one state");
        goto fail;
    }
    shp[0] = B;
    shp[1] = T;
    shp[2] = s.nu;
    if ((U = sc_py_shaped(uo, "U", 3, shp)) == NULL) {
        goto fail;
    }
    shp[1] = T + 1;
    shp[2] = s.nq + s.nv;
    if ((GX = sc_py_shaped(go, "GX", 3, shp)) == NULL ||
        !sc_py_options(isa, dense, nthreads, B, &o)) {
        goto fail;
    }
    shp[1] = s.nq + s.nv;
    if ((gx0 = sc_py_empty(2, shp)) == NULL) {
        goto fail;
    }
    shp[1] = T;
    shp[2] = s.nu;
    if ((gU = sc_py_zeros(3, shp)) == NULL ||
        (status = (PyArrayObject *)PyArray_SimpleNew(1, &B, NPY_INT)) == NULL ||
        (work = sc_py_work((ptrdiff_t)o.nthreads * sc_rollout_vjp_workspace_size(m))) == NULL) {
        goto fail;
    }
    sc_py_release(&call, &o);
    st = sc_rollout_vjp(m, B, T, sc_py_data(X), sc_py_data(U), sc_py_data(GX), &o, work,
                        sc_py_data(gx0), sc_py_data(gU), (int *)PyArray_DATA(status));
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    if (st != SC_OK) {
        sc_py_raise(st, "rollout_vjp", NULL);
        goto fail;
    }
    Py_DECREF(X);
    Py_DECREF(U);
    Py_DECREF(GX);
    return Py_BuildValue("NNN", (PyObject *)gx0, (PyObject *)gU, (PyObject *)status);
fail:
    Py_XDECREF(X);
    Py_XDECREF(U);
    Py_XDECREF(GX);
    Py_XDECREF(gx0);
    Py_XDECREF(gU);
    Py_XDECREF(status);
    return NULL;
}

PyDoc_STRVAR(model_eval_doc,
             "model_eval(model, what, x, x_next=None, num_threads=1, isa=-1, dense=0): what = 0 "
             "inverse dynamics -> (u, f); 1 energy -> (3,); 2 momentum -> (D + rot,)");

static PyObject *py_model_eval(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"model", "what", "x", "x_next", "num_threads", "isa", "dense", NULL};
    static const char *const names[3] = {"inverse_dynamics", "energy", "momentum"};
    PyObject *mo, *xo, *xno = Py_None;
    int what, nthreads = 1, isa = SC_ISA_AUTO, dense = 0, st = SC_OK;
    const sc_model *m;
    sc_model_sizes s;
    sc_options o;
    sc_py_call call;
    PyArrayObject *x = NULL, *xn = NULL, *o1 = NULL, *o2 = NULL;
    double *work = NULL;
    npy_intp shp[1];

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OiO|Oiii:model_eval", kwlist, &mo, &what, &xo,
                                     &xno, &nthreads, &isa, &dense)) {
        return sc_py_parse_error("model_eval");
    }
    if ((m = get_model(mo, &s)) == NULL) {
        return NULL;
    }
    if (what < 0 || what > 2) {
        PyErr_SetString(PyExc_ValueError, "what must be 0, 1 or 2");
        return NULL;
    }
    if (!sc_py_options(isa, dense, nthreads, PY_SSIZE_T_MAX, &o)) {
        return NULL;
    }
    shp[0] = s.nq + s.nv;
    if ((x = sc_py_shaped(xo, "x", 1, shp)) == NULL ||
        (what == 0 && (xn = sc_py_shaped(xno, "x_next", 1, shp)) == NULL)) {
        goto fail;
    }
    shp[0] = what == 0 ? s.nu : what == 1 ? 3 : (m->dim == 2 ? 3 : 6);
    if ((o1 = sc_py_zeros(1, shp)) == NULL) {
        goto fail;
    }
    shp[0] = s.nv;
    if ((what == 0 && (o2 = sc_py_zeros(1, shp)) == NULL) ||
        (work = sc_py_work(sc_step_workspace_size(m, 0, 0, o.nthreads))) == NULL) {
        goto fail;
    }
    sc_py_release(&call, &o);
    if (what == 0) {
        st = sc_inverse_dynamics(m, sc_py_data(x), sc_py_data(xn), &o, work, sc_py_data(o1),
                                 sc_py_data(o2));
    } else if (what == 1) {
        st = sc_energy(m, sc_py_data(x), &o, work, sc_py_data(o1));
    } else {
        st = sc_momentum(m, sc_py_data(x), sc_py_data(o1));
    }
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    if (st != SC_OK) {
        sc_py_raise(st, names[what], what == 0 ? "x and x_next" : "x");
        goto fail;
    }
    Py_DECREF(x);
    Py_XDECREF(xn);
    if (what == 0) {
        return Py_BuildValue("NN", (PyObject *)o1, (PyObject *)o2);
    }
    return (PyObject *)o1;
fail:
    Py_XDECREF(x);
    Py_XDECREF(xn);
    Py_XDECREF(o1);
    Py_XDECREF(o2);
    return NULL;
}

PyDoc_STRVAR(rollout_policy_doc,
             "rollout_policy(model, X, U, k, K, alpha, lo, hi, num_threads=1, isa=-1, dense=0) -> "
             "(Xn, Un, status, failed): the closed-loop rollout of sc_rollout_policy; X (T + 1, "
             "nx), U/k/lo/hi (T, nu), K (T, nu, 2 nv); status 0 or the failed step's");

static PyObject *py_rollout_policy(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"model", "X",  "U",           "k",   "K",     "alpha",
                             "lo",    "hi", "num_threads", "isa", "dense", NULL};
    static const char *names[6] = {"X", "U", "k", "K", "lo", "hi"};
    PyObject *mo, *in[6], *result = NULL;
    PyArrayObject *a[6] = {NULL}, *Xn = NULL, *Un = NULL;
    int nthreads = 1, isa = SC_ISA_AUTO, dense = 0, st, i;
    double alpha, *work = NULL;
    const sc_model *m;
    sc_model_sizes s;
    sc_options o;
    sc_py_call call;
    npy_intp shp[3], T;
    ptrdiff_t failed = -1;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOdOO|iii:rollout_policy", kwlist, &mo, &in[0],
                                     &in[1], &in[2], &in[3], &alpha, &in[4], &in[5], &nthreads,
                                     &isa, &dense)) {
        return sc_py_parse_error("rollout_policy");
    }
    if ((m = get_model(mo, &s)) == NULL ||
        !sc_py_options(isa, dense, nthreads, PY_SSIZE_T_MAX, &o)) {
        return NULL;
    }
    if (!isfinite(alpha)) {
        PyErr_SetString(PyExc_ValueError, "rollout_policy: alpha must be finite");
        return NULL;
    }
    shp[0] = -1, shp[1] = s.nq + s.nv;
    if ((a[0] = sc_py_shaped(in[0], names[0], 2, shp)) == NULL) {
        goto done;
    }
    T = PyArray_DIM(a[0], 0) - 1;
    if (T < 0) {
        PyErr_SetString(PyExc_ValueError, "rollout_policy: X must hold at least one state");
        goto done;
    }
    for (i = 1; i < 6; i++) {
        shp[0] = T, shp[1] = s.nu, shp[2] = 2 * s.nv;
        if ((a[i] = sc_py_shaped(in[i], names[i], i == 3 ? 3 : 2, shp)) == NULL) {
            goto done;
        }
    }
    shp[0] = T + 1, shp[1] = s.nq + s.nv;
    if ((Xn = sc_py_empty(2, shp)) == NULL) {
        goto done;
    }
    shp[0] = T, shp[1] = s.nu;
    if ((Un = sc_py_empty(2, shp)) == NULL ||
        (work = sc_py_work(sc_step_workspace_size(m, 0, 0, o.nthreads) + 2 * s.nv)) == NULL) {
        goto done;
    }
    sc_py_release(&call, &o);
    st = sc_rollout_policy(m, T, sc_py_data(a[0]), sc_py_data(a[1]), sc_py_data(a[2]),
                           sc_py_data(a[3]), alpha, sc_py_data(a[4]), sc_py_data(a[5]), &o, work,
                           sc_py_data(Xn), sc_py_data(Un), &failed);
    st = sc_py_acquire(&call, st);
    if (st == SC_EINTERRUPTED || st == SC_ENOMEM || st == SC_EINVAL || st == SC_EUNSUPPORTED) {
        sc_py_raise(st, "rollout_policy", NULL);
        goto done;
    }
    result = Py_BuildValue("OOin", (PyObject *)Xn, (PyObject *)Un, st, (Py_ssize_t)failed);
done:
    for (i = 0; i < 6; i++) {
        Py_XDECREF(a[i]);
    }
    Py_XDECREF(Xn);
    Py_XDECREF(Un);
    PyMem_RawFree(work);
    return result;
}

PyMethodDef sc_py_model_methods[] = {
    {"model_new", (PyCFunction)py_model_new, METH_VARARGS, model_new_doc},
    {"model_sizes", (PyCFunction)py_model_sizes, METH_O, model_sizes_doc},
    {"step", (PyCFunction)(void (*)(void))py_step, METH_VARARGS | METH_KEYWORDS, step_doc},
    {"rollout", (PyCFunction)(void (*)(void))py_rollout, METH_VARARGS | METH_KEYWORDS, rollout_doc},
    {"rollout_vjp", (PyCFunction)(void (*)(void))py_rollout_vjp, METH_VARARGS | METH_KEYWORDS,
     rollout_vjp_doc},
    {"rollout_policy", (PyCFunction)(void (*)(void))py_rollout_policy, METH_VARARGS | METH_KEYWORDS,
     rollout_policy_doc},
    {"model_eval", (PyCFunction)(void (*)(void))py_model_eval, METH_VARARGS | METH_KEYWORDS,
     model_eval_doc},
    {NULL, NULL, 0, NULL},
};
