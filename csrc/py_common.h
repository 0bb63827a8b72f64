/*
 * py_common.h - what the binding's files (_coremodule.c, py_*.c) share: argument parsing,
 * checks with messages naming the argument, status-to-exception mapping, scratch.
 *
 * Include after Python.h and numpy/arrayobject.h (the binding files include those
 * themselves; setup.py defines PY_ARRAY_UNIQUE_SYMBOL, so that the one import_array of
 * _coremodule.c serves every file, and the others define NO_IMPORT_ARRAY).
 *
 * Every binding function: parse -> validate (ValueError/TypeError naming the argument) ->
 * allocate -> release the GIL around the C call -> map the status to an exception.  The
 * documented public API is the Python layer (the modules of softcontact/); these functions re-check
 * what they receive because they can also be called directly.
 */
#ifndef PY_COMMON_H
#define PY_COMMON_H

#include "softcontact.h"

/* softcontact.NumericalError (created by PyInit__core) */
extern PyObject *sc_py_NumericalError;
/* softcontact.DivergenceError(NumericalError), args (message, x_next) */
extern PyObject *sc_py_DivergenceError;

/* A C call with the GIL released and Ctrl-C polled (sc_interrupt): on the main thread
 * the kernels call PyErr_CheckSignals every SC_PY_POLL_PERIOD seconds (holding the GIL
 * for that moment); a handler that raises (KeyboardInterrupt) stops the call, which then
 * returns SC_EINTERRUPTED with the exception set.  Other threads do not poll (Python runs
 * signal handlers on the main thread only).  Use:
 *     sc_py_call c;
 *     sc_py_release(&c, &o);            (instead of Py_BEGIN_ALLOW_THREADS)
 *     st = sc_kernel(..., &o, ...);
 *     st = sc_py_acquire(&c, st);       (instead of Py_END_ALLOW_THREADS)
 * and map st with sc_py_raise, which keeps the handler's exception. */
#define SC_PY_POLL_PERIOD 0.01
typedef struct sc_py_call {
    sc_interrupt it;
    PyThreadState *ts;
} sc_py_call;
void sc_py_release(sc_py_call *c, sc_options *o);
int sc_py_acquire(sc_py_call *c, int st);

/* Map a status code of `func` to an exception, naming the arguments `inputs` (or NULL)
 * for a non-finite value or a quaternion not of unit norm; returns NULL. */
PyObject *sc_py_raise(int st, const char *func, const char *inputs);

/* After a failed PyArg_Parse* of `func`: an argument beyond the range of its C type (an
 * int for an `i` or `n` field, a number too large for a double for a `d` field) raised
 * OverflowError, which becomes a ValueError with the same message, as the Python layer
 * reports values out of range; other exceptions are kept.  Returns NULL. */
PyObject *sc_py_parse_error(const char *func);

/* 1 if obj is not a NumPy masked array (or numpy.ma.masked) and holds none in nested
 * lists and tuples; else 0 with TypeError naming `name` (converting one would drop its
 * mask, or warn and read numpy.ma.masked as NaN) */
int sc_py_not_masked(PyObject *obj, const char *name);
/* the same for every argument of a call before it is parsed: positional argument i is
 * named names[i] (the list ends with NULL), a keyword argument by its keyword */
int sc_py_no_masked_args(PyObject *args, PyObject *kwds, char *const *names);

/* float64, C-contiguous, aligned view or copy of obj; TypeError naming `name` for an
 * unsafe cast or a masked array, ValueError for a number too large for a float64 (a
 * Python int) */
PyArrayObject *sc_py_doubles(PyObject *obj, const char *name);

/* the same, of exactly the given shape (ndim entries, -1 = any) */
PyArrayObject *sc_py_shaped(PyObject *obj, const char *name, int ndim, const npy_intp *shape);

/* a must be 2-D (rows, cols) with cols == want (want == 0: 2 or 3); 0 with ValueError */
int sc_py_rows_of(PyArrayObject *a, int want, const char *name);

/* the packed buffer (pack_cloud) of a D-dimensional cloud of n samples, as a view; 0 with
 * ValueError if it is not one */
int sc_py_packed(PyArrayObject *k, Py_ssize_t n, int D, const char *name, sc_packed_cloud *pc);

/* eps in its valid range (sc_common.h), order in 0..max_order; 0 with ValueError if not */
int sc_py_eps(double eps);
/* lo <= v <= hi; else 0 with ValueError "<name> must be in [lo, hi]<unit>, got v" */
int sc_py_in_range(double v, const char *name, double lo, double hi, const char *unit);
int sc_py_order(int order, int max_order);

/* Run options from the binding's arguments: isa -1 (auto: the SOFTCONTACT_ISA environment
 * variable if set, else the best this CPU runs), 0, 1 or 2; dense 0 or 1; nthreads 0 (the
 * cores this process may run on) or 1..; at most `items` threads (at least 1).  0 with
 * ValueError if not valid. */
int sc_py_options(int isa, int dense, int nthreads, Py_ssize_t items, sc_options *o);

/* the name of the ISA that isa -1 resolves to (honouring SOFTCONTACT_ISA), or NULL with
 * ValueError for an unknown SOFTCONTACT_ISA */
const char *sc_py_default_isa(void);

/* the cores this process may run on (its CPU affinity), >= 1 */
int sc_py_available_cores(void);

/* scratch of n doubles (at least one), or NULL with MemoryError; free with
 * PyMem_RawFree */
double *sc_py_work(ptrdiff_t n);

/* a new float64 array of the given shape: zeroed, or uninitialized (empty) */
PyArrayObject *sc_py_zeros(int nd, const npy_intp *dims);
PyArrayObject *sc_py_empty(int nd, const npy_intp *dims);

/* the data of an array, or NULL for NULL */
static inline double *sc_py_data(PyArrayObject *a)
{
    return a ? (double *)PyArray_DATA(a) : NULL;
}

/* an owned reference to a, or to None for NULL (Py_BuildValue "N") */
static inline PyObject *sc_py_or_none(PyArrayObject *a)
{
    return a ? (PyObject *)a : Py_NewRef(Py_None);
}

/* the model of a capsule of model_new and its sizes (py_model.c), or NULL with TypeError */
const sc_model *sc_py_model(PyObject *obj, sc_model_sizes *s);

/* the functions of each binding file, for the module's method table */
extern PyMethodDef sc_py_cloud_methods[], sc_py_ssdf_methods[], sc_py_contact_methods[],
    sc_py_model_methods[], sc_py_ilqr_methods[], sc_py_batch_methods[];

#endif /* PY_COMMON_H */
