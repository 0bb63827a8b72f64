/*
 * _coremodule.c - the CPython/NumPy binding of the softcontact C core, and the
 * only C file that includes Python.h or NumPy headers.
 *
 * Every function: parse -> validate (ValueError/TypeError naming the
 * argument) -> allocate -> release the GIL around the C call -> map the status
 * to an exception.  The documented public API is the Python layer
 * (the .py files of softcontact/); these functions re-check what they receive because they
 * can also be called directly.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>

#include "softcontact.h"

static PyObject *NumericalError; /* created in PyInit__core */

_Static_assert(sizeof(ptrdiff_t) == sizeof(npy_intp), "ptrdiff_t and npy_intp differ");

/* Map a status code to an exception; returns NULL for `return raise_status(...)`. */
static PyObject *raise_status(int st, const char *func)
{
    if (st == SC_EINVAL || st == SC_EUNSUPPORTED) {
        PyErr_Format(PyExc_ValueError, "%s: %s", func, sc_status_str(st));
    } else if (st == SC_ENOMEM) {
        PyErr_NoMemory();
    } else {
        PyErr_Format(NumericalError, "%s: %s", func, sc_status_str(st));
    }
    return NULL;
}

/* raise_status, with ValueError messages of the caller's for SC_ENONFINITE and SC_EINVAL
 * (printf formats whose one optional %s is func) */
static PyObject *raise_status_as(int st, const char *func, const char *nonfinite,
                                 const char *einval)
{
    if (st == SC_ENONFINITE) {
        return PyErr_Format(PyExc_ValueError, nonfinite, func);
    }
    if (st == SC_EINVAL) {
        return PyErr_Format(PyExc_ValueError, einval, func);
    }
    return raise_status(st, func);
}

/* float64, C-contiguous, aligned view/copy of obj; TypeError for unsafe casts */
static PyArrayObject *as_double_array(PyObject *obj, const char *name)
{
    PyArrayObject *a =
        (PyArrayObject *)PyArray_FROM_OTF(obj, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (a == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_Format(PyExc_TypeError, "%s must be an array of float64 (or safely castable): %S",
                     name, value ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    return a;
}

/* shape string like "(5, 2)" for messages */
static PyObject *shape_of(PyArrayObject *a)
{
    PyObject *t = PyTuple_New(PyArray_NDIM(a));
    int k;
    if (t == NULL) {
        return NULL;
    }
    for (k = 0; k < PyArray_NDIM(a); k++) {
        PyObject *d = PyLong_FromSsize_t(PyArray_DIM(a, k));
        if (d == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, d);
    }
    return t;
}

/* a must be 2-D (rows, cols) with cols == want (want == 0: 2 or 3) */
static int is_rows_of(PyArrayObject *a, int want, const char *name)
{
    if (PyArray_NDIM(a) != 2 ||
        (want ? PyArray_DIM(a, 1) != want : (PyArray_DIM(a, 1) != 2 && PyArray_DIM(a, 1) != 3))) {
        PyObject *s = shape_of(a);
        if (s != NULL) {
            if (want) {
                PyErr_Format(PyExc_ValueError, "%s must have shape (N, %d), got %S", name, want, s);
            } else {
                PyErr_Format(PyExc_ValueError, "%s must have shape (N, 2) or (N, 3), got %S", name,
                             s);
            }
            Py_DECREF(s);
        }
        return 0;
    }
    return 1;
}

static int check_isa(int isa)
{
    int r = sc_isa_resolve(isa);
    if (r == SC_EINVAL) {
        PyErr_Format(PyExc_ValueError, "isa must be -1 (auto), 0 (generic), 1 (avx2) or 2 (avx512), got %d", isa);
        return -1;
    }
    if (r == SC_EUNSUPPORTED) {
        PyErr_Format(PyExc_ValueError, "isa %s is not supported by this CPU or build",
                     sc_isa_name(isa));
        return -1;
    }
    return r;
}

PyDoc_STRVAR(pack_cloud_doc, "pack_cloud(points, normals, weights) -> packed kernel buffer (1-D float64)");

static PyObject *py_pack_cloud(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"points", "normals", "weights", NULL};
    PyObject *p_obj, *n_obj, *w_obj;
    PyArrayObject *p = NULL, *nrm = NULL, *w = NULL, *out = NULL;
    sc_cloud c;
    npy_intp size;
    int st;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO:pack_cloud", kwlist, &p_obj, &n_obj,
                                     &w_obj)) {
        return NULL;
    }
    if ((p = as_double_array(p_obj, "points")) == NULL ||
        (nrm = as_double_array(n_obj, "normals")) == NULL ||
        (w = as_double_array(w_obj, "weights")) == NULL) {
        goto fail;
    }
    if (!is_rows_of(p, 0, "points") || !is_rows_of(nrm, (int)PyArray_DIM(p, 1), "normals")) {
        goto fail;
    }
    if (PyArray_DIM(p, 0) < 1 || PyArray_DIM(nrm, 0) != PyArray_DIM(p, 0) ||
        PyArray_NDIM(w) != 1 || PyArray_DIM(w, 0) != PyArray_DIM(p, 0)) {
        PyErr_Format(PyExc_ValueError,
                     "points, normals and weights must have N >= 1 matching rows, got %zd, %zd "
                     "and weights of %d dimension(s)",
                     (Py_ssize_t)PyArray_DIM(p, 0), (Py_ssize_t)PyArray_DIM(nrm, 0),
                     PyArray_NDIM(w));
        goto fail;
    }
    c.dim = (int)PyArray_DIM(p, 1);
    c.n = PyArray_DIM(p, 0);
    c.p = (const double *)PyArray_DATA(p);
    c.nrm = (const double *)PyArray_DATA(nrm);
    c.wts = (const double *)PyArray_DATA(w);
    size = sc_cloud_packed_size(c.dim, c.n);
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "points: cloud too large");
        goto fail;
    }
    out = (PyArrayObject *)PyArray_SimpleNew(1, &size, NPY_DOUBLE);
    if (out == NULL) {
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    st = sc_cloud_pack(&c, (double *)PyArray_DATA(out), NULL);
    Py_END_ALLOW_THREADS
    if (st != SC_OK) {
        raise_status_as(st, "pack_cloud",
                        "points, normals and weights must be finite (NaN or inf found)",
                        "weights must be > 0");
        goto fail;
    }
    Py_DECREF(p);
    Py_DECREF(nrm);
    Py_DECREF(w);
    return (PyObject *)out;
fail:
    Py_XDECREF(p);
    Py_XDECREF(nrm);
    Py_XDECREF(w);
    Py_XDECREF(out);
    return NULL;
}

/* packed buffer of a D-dimensional cloud of n samples, as a view; 0 with ValueError if not */
static int packed_view(PyArrayObject *k, Py_ssize_t n, int D, const char *name,
                       sc_packed_cloud *pc)
{
    if (n < 1 || PyArray_NDIM(k) != 1 || PyArray_DIM(k, 0) != sc_cloud_packed_size(D, n)) {
        PyErr_Format(PyExc_ValueError,
                     "%s must be the 1-D buffer of pack_cloud for a %d-D cloud of n = %zd samples",
                     name, D, n);
        return 0;
    }
    pc->dim = D;
    pc->n = n;
    pc->npad = (n + SC_PAD - 1) / SC_PAD * SC_PAD;
    pc->data = (const double *)PyArray_DATA(k);
    return 1;
}

/* eps finite and > 0, order in 0..max_order, num_threads >= 1 (clipped to
 * SC_MAX_THREADS), isa known and supported (resolved in place); 0 with ValueError if not */
static int check_params(double eps, int order, int max_order, int *nthreads, int *isa)
{
    if (!(eps > 0.0) || !isfinite(eps)) {
        PyObject *e = PyFloat_FromDouble(eps);
        if (e != NULL) {
            PyErr_Format(PyExc_ValueError, "eps must be finite and > 0, got %R", e);
            Py_DECREF(e);
        }
        return 0;
    }
    if (order < 0 || order > max_order) {
        PyErr_Format(PyExc_ValueError, "order must be in 0..%d, got %d", max_order, order);
        return 0;
    }
    if (*nthreads < 1) {
        PyErr_Format(PyExc_ValueError, "num_threads must be >= 1, got %d", *nthreads);
        return 0;
    }
    if (*nthreads > SC_MAX_THREADS) {
        *nthreads = SC_MAX_THREADS;
    }
    return (*isa = check_isa(*isa)) >= 0;
}

PyDoc_STRVAR(ssdf_doc,
             "ssdf(packed, n, x, eps, order=0, num_threads=1, isa=-1) -> (phi, grad, hess, d3)");

static PyObject *py_ssdf(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"packed", "n", "x", "eps", "order", "num_threads", "isa", NULL};
    PyObject *k_obj, *x_obj;
    Py_ssize_t n;
    double eps;
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, D, st;
    PyArrayObject *packed = NULL, *x = NULL, *phi = NULL, *g = NULL, *h = NULL, *t = NULL;
    double *work = NULL;
    sc_packed_cloud pc;
    npy_intp m, dims[4];
    ptrdiff_t wsize;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnOd|iii:ssdf", kwlist, &k_obj, &n, &x_obj,
                                     &eps, &order, &nthreads, &isa)) {
        return NULL;
    }
    if ((packed = as_double_array(k_obj, "packed")) == NULL ||
        (x = as_double_array(x_obj, "x")) == NULL) {
        goto fail;
    }
    if (!is_rows_of(x, 0, "x")) {
        goto fail;
    }
    D = (int)PyArray_DIM(x, 1);
    if (!packed_view(packed, n, D, "packed", &pc) ||
        !check_params(eps, order, 3, &nthreads, &isa)) {
        goto fail;
    }
    m = PyArray_DIM(x, 0);

    /* outputs and scratch, allocated only after every check passed */
    dims[0] = dims[1] = dims[2] = dims[3] = D;
    dims[0] = m;
    if ((phi = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_DOUBLE)) == NULL ||
        (order >= 1 && (g = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE)) == NULL) ||
        (order >= 2 && (h = (PyArrayObject *)PyArray_SimpleNew(3, dims, NPY_DOUBLE)) == NULL) ||
        (order >= 3 && (t = (PyArrayObject *)PyArray_SimpleNew(4, dims, NPY_DOUBLE)) == NULL)) {
        goto fail;
    }
    wsize = sc_ssdf_workspace_size(&pc);
    if (nthreads > m) {
        nthreads = m > 0 ? (int)m : 1;
    }
    work = (double *)PyMem_RawMalloc((size_t)nthreads * (size_t)wsize * sizeof(double));
    if (work == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    st = sc_ssdf(&pc, eps, m, (const double *)PyArray_DATA(x), isa, nthreads, work,
                 (double *)PyArray_DATA(phi), g ? (double *)PyArray_DATA(g) : NULL,
                 h ? (double *)PyArray_DATA(h) : NULL, t ? (double *)PyArray_DATA(t) : NULL);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(work);
    work = NULL;
    if (st != SC_OK) {
        raise_status(st, "ssdf");
        goto fail;
    }
    Py_DECREF(packed);
    Py_DECREF(x);
    return Py_BuildValue("NNNN", (PyObject *)phi, g ? (PyObject *)g : Py_NewRef(Py_None),
                         h ? (PyObject *)h : Py_NewRef(Py_None),
                         t ? (PyObject *)t : Py_NewRef(Py_None));
fail:
    PyMem_RawFree(work);
    Py_XDECREF(packed);
    Py_XDECREF(x);
    Py_XDECREF(phi);
    Py_XDECREF(g);
    Py_XDECREF(h);
    Py_XDECREF(t);
    return NULL;
}

PyDoc_STRVAR(separation_doc,
             "separation(packed_a, n_a, pose_a, packed_b, n_b, pose_b, eps, order=0, "
             "num_threads=1, isa=-1) -> (phi, x, G, dphi_dq, d2phi_dq2)");

static PyObject *py_separation(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"packed_a", "n_a", "pose_a", "packed_b", "n_b", "pose_b",
                             "eps", "order", "num_threads", "isa", NULL};
    PyObject *ka_obj, *kb_obj, *qa_obj, *qb_obj;
    Py_ssize_t na, nb;
    double eps;
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, D, st, nq;
    PyArrayObject *ka = NULL, *kb = NULL, *qa = NULL, *qb = NULL;
    PyArrayObject *phi = NULL, *x = NULL, *g = NULL, *d1 = NULL, *d2 = NULL;
    double *work = NULL;
    sc_packed_cloud pa, pb;
    npy_intp n, dims[3];

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnOOnOd|iii:separation", kwlist, &ka_obj, &na,
                                     &qa_obj, &kb_obj, &nb, &qb_obj, &eps, &order, &nthreads,
                                     &isa)) {
        return NULL;
    }
    if ((ka = as_double_array(ka_obj, "packed_a")) == NULL ||
        (kb = as_double_array(kb_obj, "packed_b")) == NULL ||
        (qa = as_double_array(qa_obj, "pose_a")) == NULL ||
        (qb = as_double_array(qb_obj, "pose_b")) == NULL) {
        goto fail;
    }
    if (PyArray_NDIM(qa) != 1 || (PyArray_DIM(qa, 0) != 3 && PyArray_DIM(qa, 0) != 7) ||
        PyArray_NDIM(qb) != 1 || PyArray_DIM(qb, 0) != PyArray_DIM(qa, 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "pose_a and pose_b must both have shape (3,) (2D) or (7,) (3D)");
        goto fail;
    }
    D = PyArray_DIM(qa, 0) == 3 ? 2 : 3;
    if (!packed_view(ka, na, D, "packed_a", &pa) || !packed_view(kb, nb, D, "packed_b", &pb) ||
        !check_params(eps, order, 2, &nthreads, &isa)) {
        goto fail;
    }
    n = na + nb;
    nq = D == 2 ? 6 : 12;
    dims[0] = n;
    dims[1] = D;
    if ((phi = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_DOUBLE)) == NULL ||
        (x = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE)) == NULL ||
        (g = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE)) == NULL) {
        goto fail;
    }
    dims[1] = dims[2] = nq;
    if ((order >= 1 && (d1 = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE)) == NULL) ||
        (order >= 2 && (d2 = (PyArrayObject *)PyArray_SimpleNew(3, dims, NPY_DOUBLE)) == NULL)) {
        goto fail;
    }
    work = (double *)PyMem_RawMalloc((size_t)sc_separation_workspace_size(&pa, &pb, nthreads) *
                                     sizeof(double));
    if (work == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    st = sc_separation(&pa, (const double *)PyArray_DATA(qa), &pb,
                       (const double *)PyArray_DATA(qb), eps, isa, nthreads, work,
                       (double *)PyArray_DATA(phi), (double *)PyArray_DATA(x),
                       (double *)PyArray_DATA(g), d1 ? (double *)PyArray_DATA(d1) : NULL,
                       d2 ? (double *)PyArray_DATA(d2) : NULL);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(work);
    work = NULL;
    if (st != SC_OK) {
        raise_status_as(st, "separation", "pose_a and pose_b must be finite",
                        "%s: invalid argument (zero quaternion?)");
        goto fail;
    }
    Py_DECREF(ka);
    Py_DECREF(kb);
    Py_DECREF(qa);
    Py_DECREF(qb);
    return Py_BuildValue("NNNNN", (PyObject *)phi, (PyObject *)x, (PyObject *)g,
                         d1 ? (PyObject *)d1 : Py_NewRef(Py_None),
                         d2 ? (PyObject *)d2 : Py_NewRef(Py_None));
fail:
    PyMem_RawFree(work);
    Py_XDECREF(ka);
    Py_XDECREF(kb);
    Py_XDECREF(qa);
    Py_XDECREF(qb);
    Py_XDECREF(phi);
    Py_XDECREF(x);
    Py_XDECREF(g);
    Py_XDECREF(d1);
    Py_XDECREF(d2);
    return NULL;
}

PyDoc_STRVAR(contact_doc,
             "contact(packed_a, n_a, pose_a, vel_a, packed_b, n_b, pose_b, vel_b, params, "
             "order=0, num_threads=1, isa=-1) -> (wrench, energy, depth, phi_min, phi, pi, "
             "forces, points, jac, hess); params = (eps, eps_c, stiffness, beta, damping, "
             "friction, slip_velocity)");

static PyObject *py_contact(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"packed_a", "n_a", "pose_a", "vel_a", "packed_b", "n_b", "pose_b",
                             "vel_b", "params", "order", "num_threads", "isa", NULL};
    static const char *pnames[7] = {"eps", "eps_c", "stiffness", "beta", "damping",
                                    "friction", "slip_velocity"};
    PyObject *ka_obj, *kb_obj, *qa_obj, *qb_obj, *va_obj, *vb_obj;
    Py_ssize_t na, nb;
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, D, st, nv, j;
    PyArrayObject *ka = NULL, *kb = NULL, *qa = NULL, *qb = NULL, *va = NULL, *vb = NULL;
    PyArrayObject *w = NULL, *phi = NULL, *pi = NULL, *f = NULL, *x = NULL, *jac = NULL,
                  *hess = NULL;
    double *work = NULL, scal[3], pv[7];
    sc_contact_params prm;
    sc_packed_cloud pa, pb;
    npy_intp n, dims[3];

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnOOOnOO(ddddddd)|iii:contact", kwlist,
                                     &ka_obj, &na, &qa_obj, &va_obj, &kb_obj, &nb, &qb_obj,
                                     &vb_obj, &pv[0], &pv[1], &pv[2], &pv[3], &pv[4], &pv[5],
                                     &pv[6], &order, &nthreads, &isa)) {
        return NULL;
    }
    for (j = 0; j < 7; j++) {
        int ok = isfinite(pv[j]) && (j == 4 || j == 5 ? pv[j] >= 0.0 : pv[j] > 0.0);
        if (!ok) {
            PyObject *e = PyFloat_FromDouble(pv[j]);
            if (e != NULL) {
                PyErr_Format(PyExc_ValueError, "%s must be finite and %s, got %R", pnames[j],
                             j == 4 || j == 5 ? ">= 0" : "> 0", e);
                Py_DECREF(e);
            }
            return NULL;
        }
    }
    prm.eps = pv[0];
    prm.eps_c = pv[1];
    prm.stiffness = pv[2];
    prm.beta = pv[3];
    prm.damping = pv[4];
    prm.friction = pv[5];
    prm.slip_velocity = pv[6];
    if ((ka = as_double_array(ka_obj, "packed_a")) == NULL ||
        (kb = as_double_array(kb_obj, "packed_b")) == NULL ||
        (qa = as_double_array(qa_obj, "pose_a")) == NULL ||
        (qb = as_double_array(qb_obj, "pose_b")) == NULL ||
        (va = as_double_array(va_obj, "vel_a")) == NULL ||
        (vb = as_double_array(vb_obj, "vel_b")) == NULL) {
        goto fail;
    }
    if (PyArray_NDIM(qa) != 1 || (PyArray_DIM(qa, 0) != 3 && PyArray_DIM(qa, 0) != 7) ||
        PyArray_NDIM(qb) != 1 || PyArray_DIM(qb, 0) != PyArray_DIM(qa, 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "pose_a and pose_b must both have shape (3,) (2D) or (7,) (3D)");
        goto fail;
    }
    D = PyArray_DIM(qa, 0) == 3 ? 2 : 3;
    nv = D == 2 ? 3 : 6;
    if (PyArray_NDIM(va) != 1 || PyArray_DIM(va, 0) != nv || PyArray_NDIM(vb) != 1 ||
        PyArray_DIM(vb, 0) != nv) {
        PyErr_Format(PyExc_ValueError, "vel_a and vel_b must both have shape (%d,) for %dD poses",
                     nv, D);
        goto fail;
    }
    if (!packed_view(ka, na, D, "packed_a", &pa) || !packed_view(kb, nb, D, "packed_b", &pb) ||
        !check_params(prm.eps, order, 2, &nthreads, &isa)) {
        goto fail;
    }
    n = na + nb;
    dims[0] = 2 * nv;
    dims[1] = dims[2] = 4 * nv;
    if ((w = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_DOUBLE)) == NULL ||
        (order >= 1 && (jac = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE)) == NULL) ||
        (order >= 2 && (hess = (PyArrayObject *)PyArray_SimpleNew(3, dims, NPY_DOUBLE)) == NULL)) {
        goto fail;
    }
    dims[0] = n;
    dims[1] = D;
    if ((phi = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_DOUBLE)) == NULL ||
        (pi = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_DOUBLE)) == NULL ||
        (f = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE)) == NULL ||
        (x = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_DOUBLE)) == NULL) {
        goto fail;
    }
    work = (double *)PyMem_RawMalloc((size_t)sc_contact_workspace_size(&pa, &pb, nthreads) *
                                     sizeof(double));
    if (work == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    st = sc_contact(&pa, (const double *)PyArray_DATA(qa), (const double *)PyArray_DATA(va),
                    &pb, (const double *)PyArray_DATA(qb), (const double *)PyArray_DATA(vb),
                    &prm, order, 0, isa, nthreads, work, (double *)PyArray_DATA(w), scal,
                    (double *)PyArray_DATA(phi), (double *)PyArray_DATA(pi),
                    (double *)PyArray_DATA(f), (double *)PyArray_DATA(x),
                    jac ? (double *)PyArray_DATA(jac) : NULL,
                    hess ? (double *)PyArray_DATA(hess) : NULL, NULL);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(work);
    work = NULL;
    if (st != SC_OK) {
        raise_status_as(st, "contact", "pose_a, pose_b, vel_a and vel_b must be finite",
                        "%s: invalid argument (zero quaternion?)");
        goto fail;
    }
    Py_DECREF(ka);
    Py_DECREF(kb);
    Py_DECREF(qa);
    Py_DECREF(qb);
    Py_DECREF(va);
    Py_DECREF(vb);
    return Py_BuildValue("NdddNNNNNN", (PyObject *)w, scal[0], scal[1], scal[2],
                         (PyObject *)phi, (PyObject *)pi, (PyObject *)f, (PyObject *)x,
                         jac ? (PyObject *)jac : Py_NewRef(Py_None),
                         hess ? (PyObject *)hess : Py_NewRef(Py_None));
fail:
    PyMem_RawFree(work);
    Py_XDECREF(ka);
    Py_XDECREF(kb);
    Py_XDECREF(qa);
    Py_XDECREF(qb);
    Py_XDECREF(va);
    Py_XDECREF(vb);
    Py_XDECREF(w);
    Py_XDECREF(phi);
    Py_XDECREF(pi);
    Py_XDECREF(f);
    Py_XDECREF(x);
    Py_XDECREF(jac);
    Py_XDECREF(hess);
    return NULL;
}

/* ---- models (sc_model.h) ---- */

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

static const sc_model *get_model(PyObject *obj)
{
    model_box *box;
    if (!PyCapsule_IsValid(obj, MODEL_CAPSULE)) {
        PyErr_SetString(PyExc_TypeError, "model must be a model capsule from model_new");
        return NULL;
    }
    box = (model_box *)PyCapsule_GetPointer(obj, MODEL_CAPSULE);
    return box ? &box->m : NULL;
}

/* strict float64 array of exactly the given shape (ndim entries, -1 = any) */
static PyArrayObject *shaped(PyObject *obj, const char *name, int ndim, const npy_intp *shape)
{
    PyArrayObject *a = as_double_array(obj, name);
    int k;
    if (a == NULL) {
        return NULL;
    }
    if (PyArray_NDIM(a) != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must have %d dimensions, got %d", name, ndim,
                     PyArray_NDIM(a));
        Py_DECREF(a);
        return NULL;
    }
    for (k = 0; k < ndim; k++) {
        if (shape[k] >= 0 && PyArray_DIM(a, k) != shape[k]) {
            PyObject *sh = shape_of(a);
            PyErr_Format(PyExc_ValueError, "%s has shape %S, dimension %d must be %zd", name,
                         sh ? sh : Py_None, k, (Py_ssize_t)shape[k]);
            Py_XDECREF(sh);
            Py_DECREF(a);
            return NULL;
        }
    }
    return a;
}

PyDoc_STRVAR(model_new_doc,
             "model_new(dim, dt, gravity, kinds, actuated, masses, inertias, poses, clouds, "
             "counts, supports, pairs, pair_params) -> capsule");

static PyObject *py_model_new(PyObject *Py_UNUSED(self), PyObject *args)
{
    int dim;
    double dt;
    PyObject *g_obj, *kinds_obj, *act_obj, *mass_obj, *inr_obj, *pose_obj, *clouds, *counts_obj,
        *supports, *pairs_obj, *pp_obj;
    PyArrayObject *g = NULL, *kinds = NULL, *act = NULL, *mass = NULL, *inr = NULL, *pose = NULL,
                  *counts = NULL, *pairs = NULL, *pp = NULL;
    PyArrayObject *arrs[3 * SC_MODEL_MAX_BODIES + SC_MODEL_MAX_BODIES];
    PyObject *cap = NULL;
    model_box *box = NULL;
    npy_intp nb, np_, shp[2], k;
    size_t ndata = 0, off = 0;
    int narr = 0, st;

    if (!PyArg_ParseTuple(args, "idOOOOOOOOOOO:model_new", &dim, &dt, &g_obj, &kinds_obj,
                          &act_obj, &mass_obj, &inr_obj, &pose_obj, &clouds, &counts_obj,
                          &supports, &pairs_obj, &pp_obj)) {
        return NULL;
    }
    memset(arrs, 0, sizeof arrs);
    shp[0] = 3;
    if ((g = shaped(g_obj, "gravity", 1, shp)) == NULL ||
        (mass = as_double_array(mass_obj, "masses")) == NULL) {
        goto fail;
    }
    nb = PyArray_DIM(mass, 0);
    if (PyArray_NDIM(mass) != 1 || nb < 1 || nb > SC_MODEL_MAX_BODIES) {
        PyErr_Format(PyExc_ValueError, "a model has 1..%d bodies", SC_MODEL_MAX_BODIES);
        goto fail;
    }
    shp[0] = nb;
    shp[1] = 9;
    if ((kinds = shaped(kinds_obj, "kinds", 1, shp)) == NULL ||
        (act = shaped(act_obj, "actuated", 1, shp)) == NULL ||
        (counts = shaped(counts_obj, "counts", 1, shp)) == NULL ||
        (inr = shaped(inr_obj, "inertias", 2, shp)) == NULL) {
        goto fail;
    }
    shp[1] = 7;
    if ((pose = shaped(pose_obj, "poses", 2, shp)) == NULL) {
        goto fail;
    }
    if (!PyTuple_Check(clouds) || PyTuple_GET_SIZE(clouds) != nb || !PyTuple_Check(supports) ||
        PyTuple_GET_SIZE(supports) != nb) {
        PyErr_SetString(PyExc_TypeError, "clouds and supports must be tuples, one per body");
        goto fail;
    }
    shp[0] = -1;
    shp[1] = 2;
    if ((pairs = shaped(pairs_obj, "pairs", 2, shp)) == NULL) {
        goto fail;
    }
    np_ = PyArray_DIM(pairs, 0);
    shp[0] = np_;
    shp[1] = 7;
    if ((pp = shaped(pp_obj, "pair_params", 2, shp)) == NULL) {
        goto fail;
    }
    /* the per-body arrays: packed cloud, support points, support weights */
    for (k = 0; k < nb; k++) {
        PyObject *sup = PyTuple_GET_ITEM(clouds, k), *sp = PyTuple_GET_ITEM(supports, k);
        const double cnt = ((const double *)PyArray_DATA(counts))[k];
        if ((arrs[3 * k] = as_double_array(sup, "clouds[k]")) == NULL) {
            goto fail;
        }
        narr = (int)(3 * k + 1);
        if (cnt > 0 && !packed_view(arrs[3 * k], (Py_ssize_t)cnt, dim, "clouds[k]",
                                    &(sc_packed_cloud){0, 0, 0, NULL})) {
            goto fail;
        }
        ndata += (size_t)PyArray_SIZE(arrs[3 * k]);
        if (sp != Py_None) {
            npy_intp s2[2] = {-1, 2}, s1[1];
            if (!PyTuple_Check(sp) || PyTuple_GET_SIZE(sp) != 5) {
                PyErr_SetString(PyExc_TypeError,
                                "a support must be (points, weights, mu, g, slip_velocity)");
                goto fail;
            }
            if ((arrs[3 * k + 1] = shaped(PyTuple_GET_ITEM(sp, 0), "support points", 2, s2)) ==
                NULL) {
                goto fail;
            }
            s1[0] = PyArray_DIM(arrs[3 * k + 1], 0);
            if ((arrs[3 * k + 2] = shaped(PyTuple_GET_ITEM(sp, 1), "support weights", 1, s1)) ==
                NULL) {
                goto fail;
            }
            ndata += (size_t)(3 * s1[0]);
        }
        narr = (int)(3 * k + 3);
    }
    box = (model_box *)PyMem_RawMalloc(sizeof(model_box) + sizeof(sc_body) * (size_t)nb +
                                       sizeof(sc_pair) * (size_t)(np_ > 0 ? np_ : 1) +
                                       sizeof(double) * (ndata + 1));
    if (box == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    memset(box, 0, sizeof(model_box) + sizeof(sc_body) * (size_t)nb);
    box->bodies = (sc_body *)(box + 1);
    box->pairs = (sc_pair *)(box->bodies + nb);
    box->data = (double *)(box->pairs + (np_ > 0 ? np_ : 1));
    box->m.dim = dim;
    box->m.dt = dt;
    box->m.nbody = (int)nb;
    box->m.npair = (int)np_;
    box->m.bodies = box->bodies;
    box->m.pairs = box->pairs;
    memcpy(box->m.gravity, PyArray_DATA(g), 3 * sizeof(double));
    for (k = 0; k < nb; k++) {
        sc_body *b = box->bodies + k;
        const double cnt = ((const double *)PyArray_DATA(counts))[k];
        PyObject *sp = PyTuple_GET_ITEM(supports, k);
        size_t len = (size_t)PyArray_SIZE(arrs[3 * k]);
        b->kind = (int)((const double *)PyArray_DATA(kinds))[k];
        b->actuated = ((const double *)PyArray_DATA(act))[k] != 0.0;
        b->mass = ((const double *)PyArray_DATA(mass))[k];
        memcpy(b->inertia, (const double *)PyArray_DATA(inr) + 9 * k, 9 * sizeof(double));
        memcpy(b->pose, (const double *)PyArray_DATA(pose) + 7 * k, 7 * sizeof(double));
        memcpy(box->data + off, PyArray_DATA(arrs[3 * k]), len * sizeof(double));
        b->cloud.dim = dim;
        b->cloud.n = cnt > 0 ? (ptrdiff_t)cnt : 0;
        b->cloud.npad = (b->cloud.n + SC_PAD - 1) / SC_PAD * SC_PAD;
        b->cloud.data = box->data + off;
        off += len;
        if (sp != Py_None) {
            npy_intp ns = PyArray_DIM(arrs[3 * k + 1], 0);
            b->nsupport = ns;
            memcpy(box->data + off, PyArray_DATA(arrs[3 * k + 1]), 2 * (size_t)ns * sizeof(double));
            b->support_points = box->data + off;
            off += 2 * (size_t)ns;
            memcpy(box->data + off, PyArray_DATA(arrs[3 * k + 2]), (size_t)ns * sizeof(double));
            b->support_weights = box->data + off;
            off += (size_t)ns;
            b->support_friction = PyFloat_AsDouble(PyTuple_GET_ITEM(sp, 2));
            b->support_gravity = PyFloat_AsDouble(PyTuple_GET_ITEM(sp, 3));
            b->support_slip = PyFloat_AsDouble(PyTuple_GET_ITEM(sp, 4));
            if (PyErr_Occurred()) {
                goto fail;
            }
        }
    }
    for (k = 0; k < np_; k++) {
        const double *pr = (const double *)PyArray_DATA(pairs) + 2 * k;
        const double *q = (const double *)PyArray_DATA(pp) + 7 * k;
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
    if ((st = sc_model_check(&box->m, NULL)) != SC_OK) {
        PyErr_SetString(PyExc_ValueError, "model_new: inconsistent model (sc_model_check)");
        goto fail;
    }
    cap = PyCapsule_New(box, MODEL_CAPSULE, model_free);
    if (cap == NULL) {
        goto fail;
    }
    box = NULL;
fail:
    PyMem_RawFree(box);
    for (k = 0; k < narr; k++) {
        Py_XDECREF(arrs[k]);
    }
    Py_XDECREF(g);
    Py_XDECREF(kinds);
    Py_XDECREF(act);
    Py_XDECREF(mass);
    Py_XDECREF(inr);
    Py_XDECREF(pose);
    Py_XDECREF(counts);
    Py_XDECREF(pairs);
    Py_XDECREF(pp);
    return cap;
}

PyDoc_STRVAR(model_sizes_doc, "model_sizes(model) -> (nq, nv, nu, np, nmove)");

static PyObject *py_model_sizes(PyObject *Py_UNUSED(self), PyObject *arg)
{
    const sc_model *m = get_model(arg);
    sc_model_sizes s;
    if (m == NULL) {
        return NULL;
    }
    sc_model_check(m, &s);
    return Py_BuildValue("iiiii", s.nq, s.nv, s.nu, s.np, s.nmove);
}

static PyObject *model_status(int st, const char *func)
{
    return raise_status_as(st, func, "%s: states and controls must be finite",
                           "%s: invalid argument (a zero quaternion?)");
}

PyDoc_STRVAR(step_doc, "step(model, x, u, order=0, params=0, num_threads=1, isa=-1) -> "
                       "(x_next, dx_dx, dx_du, d2x_dx2, d2x_dxdu, d2x_du2, dx_dp)");

/* 3D: each moving body's quaternion (state entries 7 j + 3 .. 7 j + 6) of unit norm within
 * 1e-9, computed as Model._as_state does (the same operations, so the same verdict); a
 * non-finite one is left to sc_step (SC_ENONFINITE).  Model.step's fast path relies on it
 * and reruns its own checks for the message naming the body. */
static int unit_quaternions(const sc_model *m, const sc_model_sizes *s, const double *x)
{
    int j;
    for (j = 0; m->dim == 3 && j + 7 <= s->nq; j += 7) {
        const double *q = x + j + 3;
        const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (isfinite(n) && !(fabs(n - 1.0) <= 1e-9)) {
            PyErr_Format(PyExc_ValueError,
                         "x: the quaternion of moving body %d is not unit (tolerance 1e-9)",
                         j / 7);
            return 0;
        }
    }
    return 1;
}

static PyObject *py_step(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"model", "x", "u", "order", "params", "num_threads", "isa", NULL};
    PyObject *mo, *xo, *uo;
    int order = 0, params = 0, nthreads = 1, isa = SC_ISA_AUTO, st, k;
    const sc_model *m;
    sc_model_sizes s;
    PyArrayObject *x = NULL, *u = NULL, *out[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    double *work = NULL;
    npy_intp shp[1];

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|iiii:step", kwlist, &mo, &xo, &uo, &order,
                                     &params, &nthreads, &isa)) {
        return NULL;
    }
    if ((m = get_model(mo)) == NULL) {
        return NULL;
    }
    sc_model_check(m, &s);
    if (!check_params(1.0, order, 2, &nthreads, &isa)) {
        return NULL;
    }
    shp[0] = s.nq + s.nv;
    if ((x = shaped(xo, "x", 1, shp)) == NULL ||
        !unit_quaternions(m, &s, (const double *)PyArray_DATA(x))) {
        goto fail;
    }
    shp[0] = s.nu;
    if ((u = shaped(uo, "u", 1, shp)) == NULL) {
        goto fail;
    }
    {
        const npy_intp n2 = 2 * s.nv, nu = s.nu;
        npy_intp d[7][3] = {{s.nq + s.nv}, {n2, n2}, {n2, nu}, {n2, n2, n2}, {n2, n2, nu},
                            {n2, nu, nu}, {n2, s.np}};
        const int nd[7] = {1, 2, 2, 3, 3, 3, 2};
        const int need[7] = {1, order >= 1, order >= 1, order >= 2, order >= 2, order >= 2,
                             params != 0};
        for (k = 0; k < 7; k++) {
            if (need[k] && (out[k] = (PyArrayObject *)PyArray_ZEROS(nd[k], d[k], NPY_DOUBLE, 0)) ==
                               NULL) {
                goto fail;
            }
        }
    }
    work = (double *)PyMem_RawMalloc(
        (size_t)sc_step_workspace_size(m, order, params != 0, nthreads) * sizeof(double));
    if (work == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
#define DATA(a) ((a) ? (double *)PyArray_DATA(a) : NULL)
    Py_BEGIN_ALLOW_THREADS
    st = sc_step(m, (const double *)PyArray_DATA(x), (const double *)PyArray_DATA(u), order,
                 params != 0, isa, nthreads, work, DATA(out[0]), DATA(out[1]), DATA(out[2]),
                 DATA(out[3]), DATA(out[4]), DATA(out[5]), DATA(out[6]));
    Py_END_ALLOW_THREADS
    PyMem_RawFree(work);
    work = NULL;
    if (st != SC_OK) {
        model_status(st, "step");
        goto fail;
    }
    Py_DECREF(x);
    Py_DECREF(u);
    return Py_BuildValue("NNNNNNN", (PyObject *)out[0],
                         out[1] ? (PyObject *)out[1] : Py_NewRef(Py_None),
                         out[2] ? (PyObject *)out[2] : Py_NewRef(Py_None),
                         out[3] ? (PyObject *)out[3] : Py_NewRef(Py_None),
                         out[4] ? (PyObject *)out[4] : Py_NewRef(Py_None),
                         out[5] ? (PyObject *)out[5] : Py_NewRef(Py_None),
                         out[6] ? (PyObject *)out[6] : Py_NewRef(Py_None));
fail:
    PyMem_RawFree(work);
    Py_XDECREF(x);
    Py_XDECREF(u);
    for (k = 0; k < 7; k++) {
        Py_XDECREF(out[k]);
    }
    return NULL;
}

PyDoc_STRVAR(rollout_doc, "rollout(model, x0 (B, nx), U (B, T, nu), order=0, num_threads=1, "
                          "isa=-1) -> (X, A, Bu, status)");

static PyObject *py_rollout(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"model", "x0", "U", "order", "num_threads", "isa", NULL};
    PyObject *mo, *xo, *uo;
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, st;
    const sc_model *m;
    sc_model_sizes s;
    PyArrayObject *x0 = NULL, *U = NULL, *X = NULL, *A = NULL, *Bu = NULL, *status = NULL;
    double *work = NULL;
    npy_intp shp[4], B, T;
    ptrdiff_t ws;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|iii:rollout", kwlist, &mo, &xo, &uo, &order,
                                     &nthreads, &isa)) {
        return NULL;
    }
    if ((m = get_model(mo)) == NULL) {
        return NULL;
    }
    sc_model_check(m, &s);
    if (!check_params(1.0, order, 1, &nthreads, &isa)) {
        return NULL;
    }
    shp[0] = -1;
    shp[1] = s.nq + s.nv;
    if ((x0 = shaped(xo, "x0", 2, shp)) == NULL) {
        goto fail;
    }
    B = PyArray_DIM(x0, 0);
    shp[0] = B;
    shp[1] = -1;
    shp[2] = s.nu;
    if ((U = shaped(uo, "U", 3, shp)) == NULL) {
        goto fail;
    }
    T = PyArray_DIM(U, 1);
    shp[1] = T + 1;
    shp[2] = s.nq + s.nv;
    if ((X = (PyArrayObject *)PyArray_SimpleNew(3, shp, NPY_DOUBLE)) == NULL) {
        goto fail;
    }
    if (order >= 1) {
        shp[1] = T;
        shp[2] = shp[3] = 2 * s.nv;
        if ((A = (PyArrayObject *)PyArray_ZEROS(4, shp, NPY_DOUBLE, 0)) == NULL) {
            goto fail;
        }
        shp[3] = s.nu;
        if ((Bu = (PyArrayObject *)PyArray_ZEROS(4, shp, NPY_DOUBLE, 0)) == NULL) {
            goto fail;
        }
    }
    if ((status = (PyArrayObject *)PyArray_SimpleNew(1, &B, NPY_INT)) == NULL) {
        goto fail;
    }
    if (nthreads > B) {
        nthreads = B > 0 ? (int)B : 1;
    }
    ws = sc_step_workspace_size(m, order, 0, 1);
    work = (double *)PyMem_RawMalloc((size_t)nthreads * (size_t)ws * sizeof(double) + 1);
    if (work == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    st = sc_rollout(m, B, T, (const double *)PyArray_DATA(x0), (const double *)PyArray_DATA(U),
                    order, isa, nthreads, work, (double *)PyArray_DATA(X), DATA(A), DATA(Bu),
                    (int *)PyArray_DATA(status));
    Py_END_ALLOW_THREADS
    PyMem_RawFree(work);
    work = NULL;
    if (st != SC_OK) {
        raise_status(st, "rollout");
        goto fail;
    }
    Py_DECREF(x0);
    Py_DECREF(U);
    return Py_BuildValue("NNNN", (PyObject *)X, A ? (PyObject *)A : Py_NewRef(Py_None),
                         Bu ? (PyObject *)Bu : Py_NewRef(Py_None), (PyObject *)status);
fail:
    PyMem_RawFree(work);
    Py_XDECREF(x0);
    Py_XDECREF(U);
    Py_XDECREF(X);
    Py_XDECREF(A);
    Py_XDECREF(Bu);
    Py_XDECREF(status);
    return NULL;
}

PyDoc_STRVAR(model_eval_doc,
             "model_eval(model, what, x, x_next=None, num_threads=1, isa=-1): what = 0 inverse "
             "dynamics -> (u, f); 1 energy -> (3,); 2 momentum -> (D + rot,)");

static PyObject *py_model_eval(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"model", "what", "x", "x_next", "num_threads", "isa", NULL};
    PyObject *mo, *xo, *xno = Py_None;
    int what, nthreads = 1, isa = SC_ISA_AUTO, st = SC_OK;
    const sc_model *m;
    sc_model_sizes s;
    PyArrayObject *x = NULL, *xn = NULL, *o1 = NULL, *o2 = NULL;
    double *work = NULL;
    npy_intp shp[1];

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OiO|Oii:model_eval", kwlist, &mo, &what, &xo,
                                     &xno, &nthreads, &isa)) {
        return NULL;
    }
    if ((m = get_model(mo)) == NULL) {
        return NULL;
    }
    sc_model_check(m, &s);
    if (what < 0 || what > 2) {
        PyErr_SetString(PyExc_ValueError, "what must be 0, 1 or 2");
        return NULL;
    }
    if (!check_params(1.0, 0, 0, &nthreads, &isa)) {
        return NULL;
    }
    shp[0] = s.nq + s.nv;
    if ((x = shaped(xo, "x", 1, shp)) == NULL) {
        goto fail;
    }
    if (what == 0 && (xn = shaped(xno, "x_next", 1, shp)) == NULL) {
        goto fail;
    }
    shp[0] = what == 0 ? s.nu : what == 1 ? 3 : (m->dim == 2 ? 3 : 6);
    if ((o1 = (PyArrayObject *)PyArray_ZEROS(1, shp, NPY_DOUBLE, 0)) == NULL) {
        goto fail;
    }
    shp[0] = s.nv;
    if (what == 0 && (o2 = (PyArrayObject *)PyArray_ZEROS(1, shp, NPY_DOUBLE, 0)) == NULL) {
        goto fail;
    }
    work = (double *)PyMem_RawMalloc((size_t)sc_step_workspace_size(m, 0, 0, nthreads) *
                                     sizeof(double));
    if (work == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    if (what == 0) {
        st = sc_inverse_dynamics(m, (const double *)PyArray_DATA(x),
                                 (const double *)PyArray_DATA(xn), isa, nthreads, work,
                                 DATA(o1), DATA(o2));
    } else if (what == 1) {
        st = sc_energy(m, (const double *)PyArray_DATA(x), isa, nthreads, work, DATA(o1));
    } else {
        st = sc_momentum(m, (const double *)PyArray_DATA(x), DATA(o1));
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(work);
    work = NULL;
    if (st != SC_OK) {
        model_status(st, what == 0 ? "inverse_dynamics" : what == 1 ? "energy" : "momentum");
        goto fail;
    }
    Py_DECREF(x);
    Py_XDECREF(xn);
    if (what == 0) {
        return Py_BuildValue("NN", (PyObject *)o1, (PyObject *)o2);
    }
    return (PyObject *)o1;
fail:
    PyMem_RawFree(work);
    Py_XDECREF(x);
    Py_XDECREF(xn);
    Py_XDECREF(o1);
    Py_XDECREF(o2);
    return NULL;
}
#undef DATA

PyDoc_STRVAR(isa_info_doc,
             "isa_info() -> dict(best=name, supported=tuple of names) for this CPU and build");

static PyObject *py_isa_info(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(args))
{
    PyObject *sup = PyList_New(0), *res = NULL;
    int isa;
    if (sup == NULL) {
        return NULL;
    }
    for (isa = SC_ISA_GENERIC; isa <= SC_ISA_AVX512; isa++) {
        if (sc_isa_supported(isa)) {
            PyObject *s = PyUnicode_FromString(sc_isa_name(isa));
            if (s == NULL || PyList_Append(sup, s) < 0) {
                Py_XDECREF(s);
                Py_DECREF(sup);
                return NULL;
            }
            Py_DECREF(s);
        }
    }
    res = Py_BuildValue("{s:s,s:N}", "best", sc_isa_name(sc_isa_best()), "supported",
                        PyList_AsTuple(sup));
    Py_DECREF(sup);
    return res;
}

static PyMethodDef methods[] = {
    {"pack_cloud", (PyCFunction)(void (*)(void))py_pack_cloud, METH_VARARGS | METH_KEYWORDS,
     pack_cloud_doc},
    {"ssdf", (PyCFunction)(void (*)(void))py_ssdf, METH_VARARGS | METH_KEYWORDS, ssdf_doc},
    {"separation", (PyCFunction)(void (*)(void))py_separation, METH_VARARGS | METH_KEYWORDS,
     separation_doc},
    {"contact", (PyCFunction)(void (*)(void))py_contact, METH_VARARGS | METH_KEYWORDS,
     contact_doc},
    {"model_new", (PyCFunction)py_model_new, METH_VARARGS, model_new_doc},
    {"model_sizes", (PyCFunction)py_model_sizes, METH_O, model_sizes_doc},
    {"step", (PyCFunction)(void (*)(void))py_step, METH_VARARGS | METH_KEYWORDS, step_doc},
    {"rollout", (PyCFunction)(void (*)(void))py_rollout, METH_VARARGS | METH_KEYWORDS,
     rollout_doc},
    {"model_eval", (PyCFunction)(void (*)(void))py_model_eval, METH_VARARGS | METH_KEYWORDS,
     model_eval_doc},
    {"isa_info", py_isa_info, METH_NOARGS, isa_info_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_core",
    .m_doc = "Compiled core of softcontact (private; use the softcontact package).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__core(void); /* the one exported symbol */

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m;
    import_array();
    m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    NumericalError = PyErr_NewException("softcontact.NumericalError", PyExc_ArithmeticError, NULL);
    if (NumericalError == NULL || PyModule_AddObjectRef(m, "NumericalError", NumericalError) < 0 ||
        PyModule_AddIntConstant(m, "ISA_AUTO", SC_ISA_AUTO) < 0 ||
        PyModule_AddIntConstant(m, "ISA_GENERIC", SC_ISA_GENERIC) < 0 ||
        PyModule_AddIntConstant(m, "ISA_AVX2", SC_ISA_AVX2) < 0 ||
        PyModule_AddIntConstant(m, "ISA_AVX512", SC_ISA_AVX512) < 0 ||
        PyModule_AddIntConstant(m, "MAX_THREADS", SC_MAX_THREADS) < 0 ||
        PyModule_AddIntConstant(m, "SC_OK", SC_OK) < 0 ||
        PyModule_AddIntConstant(m, "SC_EINVAL", SC_EINVAL) < 0 ||
        PyModule_AddIntConstant(m, "SC_ENOMEM", SC_ENOMEM) < 0 ||
        PyModule_AddIntConstant(m, "SC_ENONFINITE", SC_ENONFINITE) < 0 ||
        PyModule_AddIntConstant(m, "SC_EUNSUPPORTED", SC_EUNSUPPORTED) < 0 ||
        PyModule_AddStringConstant(m, "VERSION", "0.1.0") < 0) {
        Py_XDECREF(NumericalError);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
