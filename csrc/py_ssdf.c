/*
 * py_ssdf.c - binding of the SSDF stage (sc_ssdf.h).
 */
#include <Python.h>
#define NO_IMPORT_ARRAY
#include <numpy/arrayobject.h>

#include "py_common.h"

PyDoc_STRVAR(ssdf_doc, "ssdf(packed, n, x, eps, order=0, num_threads=1, isa=-1, dense=0) -> "
                       "(phi, grad, hess, d3)");

static PyObject *py_ssdf(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"packed",      "n",   "x",     "eps", "order",
                             "num_threads", "isa", "dense", NULL};
    PyObject *k_obj, *x_obj;
    Py_ssize_t n;
    double eps, *work = NULL;
    int order = 0, nthreads = 1, isa = SC_ISA_AUTO, dense = 0, D, st, k;
    PyArrayObject *packed = NULL, *x = NULL, *out[4] = {NULL, NULL, NULL, NULL};
    sc_packed_cloud pc;
    sc_options o;
    sc_py_call call;
    npy_intp m, dims[4];

    if (!sc_py_no_masked_args(args, kwds, kwlist) ||
        !PyArg_ParseTupleAndKeywords(args, kwds, "OnOd|iiii:ssdf", kwlist, &k_obj, &n, &x_obj, &eps,
                                     &order, &nthreads, &isa, &dense)) {
        return sc_py_parse_error("ssdf");
    }
    if ((packed = sc_py_doubles(k_obj, "packed")) == NULL ||
        (x = sc_py_doubles(x_obj, "x")) == NULL || !sc_py_rows_of(x, 0, "x")) {
        goto fail;
    }
    D = (int)PyArray_DIM(x, 1);
    m = PyArray_DIM(x, 0);
    if (!sc_py_packed(packed, n, D, "packed", &pc) || !sc_py_eps(eps) || !sc_py_order(order, 3) ||
        !sc_py_options(isa, dense, nthreads, m, &o)) {
        goto fail;
    }
    /* outputs (phi, then a derivative per order) and scratch, after every check passed */
    dims[0] = m;
    dims[1] = dims[2] = dims[3] = D;
    for (k = 0; k <= order; k++) {
        if ((out[k] = sc_py_empty(k + 1, dims)) == NULL) {
            goto fail;
        }
    }
    if ((work = sc_py_work((ptrdiff_t)o.nthreads * sc_ssdf_workspace_size(&pc))) == NULL) {
        goto fail;
    }
    sc_py_release(&call, &o);
    st = sc_ssdf(&pc, eps, m, (const double *)PyArray_DATA(x), &o, work, sc_py_data(out[0]),
                 sc_py_data(out[1]), sc_py_data(out[2]), sc_py_data(out[3]));
    st = sc_py_acquire(&call, st);
    PyMem_RawFree(work);
    if (st != SC_OK) {
        sc_py_raise(st, "ssdf", "a row of x (or the cloud)");
        goto fail;
    }
    Py_DECREF(packed);
    Py_DECREF(x);
    return Py_BuildValue("NNNN", (PyObject *)out[0], sc_py_or_none(out[1]), sc_py_or_none(out[2]),
                         sc_py_or_none(out[3]));
fail:
    Py_XDECREF(packed);
    Py_XDECREF(x);
    for (k = 0; k < 4; k++) {
        Py_XDECREF(out[k]);
    }
    return NULL;
}

PyMethodDef sc_py_ssdf_methods[] = {
    {"ssdf", (PyCFunction)(void (*)(void))py_ssdf, METH_VARARGS | METH_KEYWORDS, ssdf_doc},
    {NULL, NULL, 0, NULL},
};
