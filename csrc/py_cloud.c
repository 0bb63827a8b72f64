/*
 * py_cloud.c - binding of the cloud stage (sc_cloud.h) and of the build's facts.
 */
#include <Python.h>
#define NO_IMPORT_ARRAY
#include <numpy/arrayobject.h>

#include "py_common.h"

PyDoc_STRVAR(pack_cloud_doc,
             "pack_cloud(points, normals, weights) -> packed kernel buffer (1-D float64)");

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
    if ((p = sc_py_doubles(p_obj, "points")) == NULL ||
        (nrm = sc_py_doubles(n_obj, "normals")) == NULL ||
        (w = sc_py_doubles(w_obj, "weights")) == NULL) {
        goto fail;
    }
    if (!sc_py_rows_of(p, 0, "points") || !sc_py_rows_of(nrm, (int)PyArray_DIM(p, 1), "normals")) {
        goto fail;
    }
    if (PyArray_DIM(p, 0) < 1 || PyArray_DIM(nrm, 0) != PyArray_DIM(p, 0) || PyArray_NDIM(w) != 1 ||
        PyArray_DIM(w, 0) != PyArray_DIM(p, 0)) {
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
    if ((out = sc_py_empty(1, &size)) == NULL) {
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS st = sc_cloud_pack(&c, (double *)PyArray_DATA(out), NULL);
    Py_END_ALLOW_THREADS if (st != SC_OK)
    {
        PyErr_SetString(PyExc_ValueError,
                        st == SC_ENONFINITE
                            ? "points, normals and weights must be finite (NaN or inf found)"
                            : "weights must be > 0");
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

PyDoc_STRVAR(isa_info_doc,
             "isa_info() -> dict(best=name, default=name, supported=tuple of names): this CPU "
             "and build; default honours SOFTCONTACT_ISA");

static PyObject *py_isa_info(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(args))
{
    const char *def = sc_py_default_isa();
    PyObject *sup, *res;
    int isa;
    if (def == NULL || (sup = PyList_New(0)) == NULL) {
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
    res = Py_BuildValue("{s:s,s:s,s:N}", "best", sc_isa_name(sc_isa_best()), "default", def,
                        "supported", PyList_AsTuple(sup));
    Py_DECREF(sup);
    return res;
}

PyDoc_STRVAR(available_cores_doc,
             "available_cores() -> int: the cores this process may run on (num_threads=0)");

static PyObject *py_available_cores(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(args))
{
    return PyLong_FromLong(sc_py_available_cores());
}

PyMethodDef sc_py_cloud_methods[] = {
    {"pack_cloud", (PyCFunction)(void (*)(void))py_pack_cloud, METH_VARARGS | METH_KEYWORDS,
     pack_cloud_doc},
    {"isa_info", py_isa_info, METH_NOARGS, isa_info_doc},
    {"available_cores", py_available_cores, METH_NOARGS, available_cores_doc},
    {NULL, NULL, 0, NULL},
};
