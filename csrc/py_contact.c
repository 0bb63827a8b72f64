/*
 * py_contact.c - binding of the separation field (sc_separation.h) and the contact model
 * (sc_contact.h).
 */
#include <Python.h>
#define NO_IMPORT_ARRAY
#include <numpy/arrayobject.h>

#include "py_common.h"

/* pose_a and pose_b of the same shape, (3,) (2D) or (7,) (3D): the dimension, or 0 with
   ValueError */
static int pose_dim(PyArrayObject *qa, PyArrayObject *qb)
{
    if (PyArray_NDIM(qa) != 1 || (PyArray_DIM(qa, 0) != 3 && PyArray_DIM(qa, 0) != 7) ||
        PyArray_NDIM(qb) != 1 || PyArray_DIM(qb, 0) != PyArray_DIM(qa, 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "pose_a and pose_b must both have shape (3,) (2D) or (7,) (3D)");
        return 0;
    }
    return PyArray_DIM(qa, 0) == 3 ? 2 : 3;
}

/* the two clouds' buffers and poses: arrays in k[0..4) (packed_a, packed_b, pose_a,
   pose_b), views in pa, pb, the dimension in *D; 0 with an exception */
static int pair_args(PyObject *const *obj, Py_ssize_t na, Py_ssize_t nb, PyArrayObject **k,
                     sc_packed_cloud *pa, sc_packed_cloud *pb, int *D)
{
    static const char *const names[4] = {"packed_a", "packed_b", "pose_a", "pose_b"};
    int j;
    for (j = 0; j < 4; j++) {
        if ((k[j] = sc_py_doubles(obj[j], names[j])) == NULL) {
            return 0;
        }
    }
    return (*D = pose_dim(k[2], k[3])) != 0 && sc_py_packed(k[0], na, *D, names[0], pa) &&
           sc_py_packed(k[1], nb, *D, names[1], pb);
}

PyDoc_STRVAR(separation_doc,
             "separation(packed_a, n_a, pose_a, packed_b, n_b, pose_b, eps, order=0, "
             "num_threads=1, isa=-1, dense=0) -> (phi, x, G, dphi_dq, d2phi_dq2)");

static PyObject *py_separation(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"packed_a", "n_a",   "pose_a",      "packed_b", "n_b",   "pose_b",
                             "eps",      "order", "num_threads", "isa",      "dense", NULL};
    PyObject *obj[4];
    Py_ssize_t na, nb;
    double eps, *work = NULL;
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, dense = 0, D = 2, st, j;
    PyArrayObject *in[4] = {NULL, NULL, NULL, NULL}, *out[5] = {NULL, NULL, NULL, NULL, NULL};
    sc_packed_cloud pa, pb;
    sc_separation_out so;
    sc_options o;
    sc_py_call call;
    npy_intp dims[3];

    if (!sc_py_no_masked_args(args, kwds, kwlist) ||
        !PyArg_ParseTupleAndKeywords(args, kwds, "OnOOnOd|iiii:separation", kwlist, &obj[0], &na,
                                     &obj[2], &obj[1], &nb, &obj[3], &eps, &order, &nthreads, &isa,
                                     &dense)) {
        return sc_py_parse_error("separation");
    }
    if (!pair_args(obj, na, nb, in, &pa, &pb, &D) || !sc_py_eps(eps) || !sc_py_order(order, 2) ||
        !sc_py_options(isa, dense, nthreads, na + nb, &o)) {
        goto fail;
    }
    /* phi, x, G, then the derivatives of the requested orders */
    dims[0] = na + nb;
    dims[1] = D;
    if ((out[0] = sc_py_empty(1, dims)) == NULL || (out[1] = sc_py_empty(2, dims)) == NULL ||
        (out[2] = sc_py_empty(2, dims)) == NULL) {
        goto fail;
    }
    dims[1] = dims[2] = 2 * SC_NV(D);
    for (j = 1; j <= order; j++) {
        if ((out[2 + j] = sc_py_empty(j + 1, dims)) == NULL) {
            goto fail;
        }
    }
    if ((work = sc_py_work(sc_separation_workspace_size(&pa, &pb, o.nthreads))) == NULL) {
        goto fail;
    }
    so.phi = sc_py_data(out[0]);
    so.x_w = sc_py_data(out[1]);
    so.g_w = sc_py_data(out[2]);
    so.dphi_dq = sc_py_data(out[3]);
    so.d2phi_dq2 = sc_py_data(out[4]);
    sc_py_release(&call, &o);
    st = sc_separation(&pa, sc_py_data(in[2]), &pb, sc_py_data(in[3]), eps, &o, work, &so);
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    if (st != SC_OK) {
        sc_py_raise(st, "separation", "pose_a and pose_b");
        goto fail;
    }
    for (j = 0; j < 4; j++) {
        Py_DECREF(in[j]);
    }
    return Py_BuildValue("NNNNN", (PyObject *)out[0], (PyObject *)out[1], (PyObject *)out[2],
                         sc_py_or_none(out[3]), sc_py_or_none(out[4]));
fail:
    for (j = 0; j < 4; j++) {
        Py_XDECREF(in[j]);
    }
    for (j = 0; j < 5; j++) {
        Py_XDECREF(out[j]);
    }
    return NULL;
}

PyDoc_STRVAR(contact_doc,
             "contact(packed_a, n_a, pose_a, vel_a, packed_b, n_b, pose_b, vel_b, params, "
             "order=0, num_threads=1, isa=-1, dense=0) -> (wrench, energy, depth, phi_min, phi, "
             "pi, forces, points, jac, hess); params = (eps, eps_c, stiffness, beta, damping, "
             "friction, slip_velocity)");

static PyObject *py_contact(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"packed_a",    "n_a",    "pose_a", "vel_a",  "packed_b",
                             "n_b",         "pose_b", "vel_b",  "params", "order",
                             "num_threads", "isa",    "dense",  NULL};
    PyObject *obj[4], *va_obj, *vb_obj;
    Py_ssize_t na, nb;
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, dense = 0, D = 2, st, nv, j;
    PyArrayObject *in[4] = {NULL, NULL, NULL, NULL}, *va = NULL, *vb = NULL;
    PyArrayObject *out[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    double *work = NULL, scal[3];
    sc_contact_params prm;
    sc_contact_body A, B;
    sc_contact_out co = {0};
    sc_packed_cloud pa, pb;
    sc_options o;
    sc_py_call call;
    npy_intp dims[3];

    if (!sc_py_no_masked_args(args, kwds, kwlist) ||
        !PyArg_ParseTupleAndKeywords(
            args, kwds, "OnOOOnOO(ddddddd)|iiii:contact", kwlist, &obj[0], &na, &obj[2], &va_obj,
            &obj[1], &nb, &obj[3], &vb_obj, &prm.eps, &prm.eps_c, &prm.stiffness, &prm.beta,
            &prm.damping, &prm.friction, &prm.slip_velocity, &order, &nthreads, &isa, &dense)) {
        return sc_py_parse_error("contact");
    }
    if (sc_contact_params_check(&prm) != SC_OK) {
        /* name the first field out of its range (sc_contact.h) */
        if (sc_py_eps(prm.eps) &&
            sc_py_in_range(prm.eps_c, "eps_c", SC_LENGTH_MIN, SC_LENGTH_MAX, " m") &&
            sc_py_in_range(prm.stiffness, "stiffness", SC_STIFFNESS_MIN, SC_STIFFNESS_MAX,
                           " N/m") &&
            sc_py_in_range(prm.beta, "beta", SC_LENGTH_MIN, SC_LENGTH_MAX, " m") &&
            sc_py_in_range(prm.damping, "damping", 0.0, SC_DAMPING_MAX, " N s/m") &&
            sc_py_in_range(prm.friction, "friction", 0.0, SC_FRICTION_MAX, "") &&
            sc_py_in_range(prm.slip_velocity, "slip_velocity", SC_SLIP_MIN, SC_SLIP_MAX, " m/s")) {
            PyErr_SetString(PyExc_ValueError, "params out of range"); /* not reached */
        }
        return NULL;
    }
    if (!pair_args(obj, na, nb, in, &pa, &pb, &D) ||
        (va = sc_py_doubles(va_obj, "vel_a")) == NULL ||
        (vb = sc_py_doubles(vb_obj, "vel_b")) == NULL) {
        goto fail;
    }
    nv = SC_NV(D);
    if (PyArray_NDIM(va) != 1 || PyArray_DIM(va, 0) != nv || PyArray_NDIM(vb) != 1 ||
        PyArray_DIM(vb, 0) != nv) {
        PyErr_Format(PyExc_ValueError, "vel_a and vel_b must both have shape (%d,) for %dD poses",
                     nv, D);
        goto fail;
    }
    if (!sc_py_order(order, 2) || !sc_py_options(isa, dense, nthreads, na + nb, &o)) {
        goto fail;
    }
    /* wrench, jac, hess; phi, pi, forces, points */
    dims[0] = 2 * nv;
    dims[1] = dims[2] = 4 * nv;
    for (j = 0; j <= order; j++) {
        if ((out[j] = sc_py_empty(j + 1, dims)) == NULL) {
            goto fail;
        }
    }
    dims[0] = na + nb;
    dims[1] = D;
    for (j = 3; j < 7; j++) {
        if ((out[j] = sc_py_empty(j < 5 ? 1 : 2, dims)) == NULL) {
            goto fail;
        }
    }
    if ((work = sc_py_work(sc_contact_workspace_size(&pa, &pb, o.nthreads))) == NULL) {
        goto fail;
    }
    A.cloud = &pa;
    A.pose = sc_py_data(in[2]);
    A.vel = sc_py_data(va);
    B.cloud = &pb;
    B.pose = sc_py_data(in[3]);
    B.vel = sc_py_data(vb);
    A.frozen = B.frozen = 0;
    co.wrench = sc_py_data(out[0]);
    co.jac = sc_py_data(out[1]);
    co.hess = sc_py_data(out[2]);
    co.scalars = scal;
    co.phi = sc_py_data(out[3]);
    co.pi = sc_py_data(out[4]);
    co.forces = sc_py_data(out[5]);
    co.x_w = sc_py_data(out[6]);
    sc_py_release(&call, &o);
    st = sc_contact(&A, &B, &prm, order, &o, work, &co);
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    if (st != SC_OK) {
        sc_py_raise(st, "contact", "pose_a, pose_b, vel_a and vel_b");
        goto fail;
    }
    for (j = 0; j < 4; j++) {
        Py_DECREF(in[j]);
    }
    Py_DECREF(va);
    Py_DECREF(vb);
    return Py_BuildValue("NdddNNNNNN", (PyObject *)out[0], scal[0], scal[1], scal[2],
                         (PyObject *)out[3], (PyObject *)out[4], (PyObject *)out[5],
                         (PyObject *)out[6], sc_py_or_none(out[1]), sc_py_or_none(out[2]));
fail:
    for (j = 0; j < 4; j++) {
        Py_XDECREF(in[j]);
    }
    Py_XDECREF(va);
    Py_XDECREF(vb);
    for (j = 0; j < 7; j++) {
        Py_XDECREF(out[j]);
    }
    return NULL;
}

PyMethodDef sc_py_contact_methods[] = {
    {"separation", (PyCFunction)(void (*)(void))py_separation, METH_VARARGS | METH_KEYWORDS,
     separation_doc},
    {"contact", (PyCFunction)(void (*)(void))py_contact, METH_VARARGS | METH_KEYWORDS, contact_doc},
    {NULL, NULL, 0, NULL},
};
