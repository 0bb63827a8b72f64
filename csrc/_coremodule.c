/*
 * _coremodule.c - the CPython/NumPy binding of the softcontact C core: the module, its
 * constants, and the helpers every binding file shares (py_common.h).  The functions are
 * in py_cloud.c, py_ssdf.c, py_contact.c and py_model.c, one file per stage.  Only these
 * files include Python.h or NumPy headers.
 */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
    #define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <Python.h>
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
    #include <sched.h>
#endif
#if !defined(_WIN32)
    #include <unistd.h>
#endif

#include "py_common.h"
#include "sc_parallel_internal.h"

PyObject *sc_py_NumericalError;
PyObject *sc_py_DivergenceError;

_Static_assert(sizeof(ptrdiff_t) == sizeof(npy_intp), "ptrdiff_t and npy_intp differ");

/* the interpreter's main thread (signal handlers run there), set by PyInit__core, and
   whether the calls poll for signals (_interrupt_polling; on by default) */
static unsigned long main_thread_ident;
static int polling = 1;

static int py_poll(void *ctx)
{
    sc_py_call *c = (sc_py_call *)ctx;
    int r;
    PyEval_RestoreThread(c->ts);
    r = PyErr_CheckSignals();
    c->ts = PyEval_SaveThread();
    return r != 0;
}

void sc_py_release(sc_py_call *c, sc_options *o)
{
    const int main = polling && PyThread_get_thread_ident() == main_thread_ident;
    sc_interrupt_init(&c->it, main ? py_poll : NULL, c, SC_PY_POLL_PERIOD);
    o->interrupt = main ? &c->it : NULL;
    c->ts = PyEval_SaveThread();
}

int sc_py_acquire(sc_py_call *c, int st)
{
    PyEval_RestoreThread(c->ts);
    /* a handler raised after the kernel's last check: the call is interrupted all the same */
    return PyErr_Occurred() ? SC_EINTERRUPTED : st;
}

PyObject *sc_py_raise(int st, const char *func, const char *inputs)
{
    if (st == SC_ENOMEM) {
        return PyErr_NoMemory();
    }
    if (st == SC_EINTERRUPTED) {
        if (!PyErr_Occurred()) {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
        return NULL;
    }
    if (st == SC_ENONFINITE && inputs != NULL) {
        return PyErr_Format(PyExc_ValueError, "%s: %s must be finite", func, inputs);
    }
    if (st == SC_ENOTUNIT && inputs != NULL) {
        return PyErr_Format(PyExc_ValueError,
                            "%s: a quaternion of %s is not unit (norm 1 within %g)", func, inputs,
                            SC_UNIT_TOL);
    }
    if (st == SC_ERANGE && inputs != NULL) {
        return PyErr_Format(PyExc_ValueError,
                            "%s: %s outside the valid range (docs/method.md, \"Valid ranges\")",
                            func, inputs);
    }
    if (st == SC_ENONFINITE || st == SC_EINVAL || st == SC_ENOTUNIT || st == SC_EUNSUPPORTED ||
        st == SC_ERANGE) {
        return PyErr_Format(PyExc_ValueError, "%s: %s", func, sc_status_str(st));
    }
    return PyErr_Format(sc_py_NumericalError, "%s: %s", func, sc_status_str(st));
}

/* the pending exception replaced by `exc` with the message "<prefix>: <its message>" */
static void replace_error(PyObject *exc, const char *prefix)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_Format(exc, "%s: %S", prefix, value ? value : Py_None);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

PyObject *sc_py_parse_error(const char *func)
{
    if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
        replace_error(PyExc_ValueError, func);
    }
    return NULL;
}

/* 1 if obj is a numpy.ma.MaskedArray (numpy.ma.masked included), 0 if not, -1 with an
   exception; only ndarray subclasses are looked up */
static int is_masked(PyObject *obj)
{
    PyObject *ma, *cls;
    int r;
    if (!PyArray_Check(obj) || PyArray_CheckExact(obj)) {
        return 0;
    }
    if ((ma = PyImport_ImportModule("numpy.ma")) == NULL) {
        return -1;
    }
    cls = PyObject_GetAttrString(ma, "MaskedArray");
    Py_DECREF(ma);
    if (cls == NULL) {
        return -1;
    }
    r = PyObject_IsInstance(obj, cls);
    Py_DECREF(cls);
    return r;
}

/* is_masked for obj and, recursively, the items of lists and tuples (as deep as NumPy
   nests them) */
static int holds_masked(PyObject *obj, int depth)
{
    Py_ssize_t i, n;
    int r = is_masked(obj);
    if (r != 0 || depth >= NPY_MAXDIMS || !(PyList_Check(obj) || PyTuple_Check(obj))) {
        return r;
    }
    n = PySequence_Size(obj);
    for (i = 0; r == 0 && i < n; i++) {
        PyObject *item = PySequence_GetItem(obj, i); /* a list may change meanwhile */
        if (item == NULL) {
            return -1;
        }
        r = holds_masked(item, depth + 1);
        Py_DECREF(item);
    }
    return r;
}

int sc_py_not_masked(PyObject *obj, const char *name)
{
    const int r = holds_masked(obj, 0);
    if (r > 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s: masked arrays and numpy.ma.masked are not supported; fill the "
                     "masked entries first",
                     name);
    }
    return r == 0;
}

int sc_py_no_masked_args(PyObject *args, PyObject *kwds, char *const *names)
{
    Py_ssize_t i, pos = 0;
    PyObject *key, *value;
    for (i = 0; i < PyTuple_GET_SIZE(args) && names[i] != NULL; i++) {
        if (!sc_py_not_masked(PyTuple_GET_ITEM(args, i), names[i])) {
            return 0;
        }
    }
    while (kwds != NULL && PyDict_Next(kwds, &pos, &key, &value)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (k == NULL) {
            PyErr_Clear(); /* PyArg_Parse* reports a bad keyword */
            continue;
        }
        if (!sc_py_not_masked(value, k)) {
            return 0;
        }
    }
    return 1;
}

PyArrayObject *sc_py_doubles(PyObject *obj, const char *name)
{
    PyArrayObject *a;
    if (!sc_py_not_masked(obj, name)) {
        return NULL;
    }
    a = (PyArrayObject *)PyArray_FROM_OTF(obj, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (a == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_Format(PyExc_TypeError, "%s must be an array of float64 (or safely castable): %S",
                     name, value ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    } else if (a == NULL && PyErr_ExceptionMatches(PyExc_OverflowError)) {
        /* a Python int too large for a float64 */
        replace_error(PyExc_ValueError, name);
    }
    return a;
}

/* the shape of a as a tuple, for messages */
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

PyArrayObject *sc_py_shaped(PyObject *obj, const char *name, int ndim, const npy_intp *shape)
{
    PyArrayObject *a = sc_py_doubles(obj, name);
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

int sc_py_rows_of(PyArrayObject *a, int want, const char *name)
{
    PyObject *s;
    if (PyArray_NDIM(a) == 2 &&
        (want ? PyArray_DIM(a, 1) == want : PyArray_DIM(a, 1) == 2 || PyArray_DIM(a, 1) == 3)) {
        return 1;
    }
    if ((s = shape_of(a)) != NULL) {
        if (want) {
            PyErr_Format(PyExc_ValueError, "%s must have shape (N, %d), got %S", name, want, s);
        } else {
            PyErr_Format(PyExc_ValueError, "%s must have shape (N, 2) or (N, 3), got %S", name, s);
        }
        Py_DECREF(s);
    }
    return 0;
}

int sc_py_packed(PyArrayObject *k, Py_ssize_t n, int D, const char *name, sc_packed_cloud *pc)
{
    if (n < 1 || PyArray_NDIM(k) != 1 || PyArray_DIM(k, 0) != sc_cloud_packed_size(D, n) ||
        sc_cloud_view(D, n, (const double *)PyArray_DATA(k), pc) != SC_OK) {
        PyErr_Format(PyExc_ValueError,
                     "%s must be the 1-D buffer of pack_cloud for a %d-D cloud of n = %zd samples",
                     name, D, n);
        return 0;
    }
    return 1;
}

int sc_py_eps(double eps)
{
    return sc_py_in_range(eps, "eps", SC_EPS_MIN, SC_EPS_MAX, " m^2");
}

int sc_py_in_range(double v, const char *name, double lo, double hi, const char *unit)
{
    PyObject *e;
    char rng[64];
    if (v >= lo && v <= hi) {
        return 1;
    }
    PyOS_snprintf(rng, sizeof rng, "[%g, %g]%s", lo, hi, unit);
    if ((e = PyFloat_FromDouble(v)) != NULL) {
        PyErr_Format(PyExc_ValueError, "%s must be in %s, got %R", name, rng, e);
        Py_DECREF(e);
    }
    return 0;
}

int sc_py_order(int order, int max_order)
{
    if (order >= 0 && order <= max_order) {
        return 1;
    }
    PyErr_Format(PyExc_ValueError, "order must be in 0..%d, got %d", max_order, order);
    return 0;
}

/* isa -1 resolved: SOFTCONTACT_ISA (read with the GIL held, which Python's os.environ also
   holds when it changes the environment) or the best supported; -1 with ValueError */
static int auto_isa(void)
{
    static const char *const names[3] = {"generic", "avx2", "avx512"};
    const char *env = getenv("SOFTCONTACT_ISA");
    char name[16];
    size_t i = 0, j;
    int k;
    if (env == NULL) {
        return sc_isa_best();
    }
    /* the name, lower case, surrounding white space dropped; empty or "auto": the best */
    while (env[i] == ' ' || env[i] == '\t') {
        i++;
    }
    for (j = 0; env[i] != '\0' && env[i] != ' ' && env[i] != '\t' && j < sizeof name - 1;
         i++, j++) {
        name[j] = (char)(env[i] >= 'A' && env[i] <= 'Z' ? env[i] - 'A' + 'a' : env[i]);
    }
    name[j] = '\0';
    while (env[i] == ' ' || env[i] == '\t') {
        i++;
    }
    if (env[i] == '\0') {
        if (j == 0 || strcmp(name, "auto") == 0) {
            return sc_isa_best();
        }
        for (k = 0; k < 3; k++) {
            if (strcmp(name, names[k]) == 0) {
                return k;
            }
        }
    }
    {
        PyObject *v = PyUnicode_DecodeFSDefault(env);
        if (v != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "SOFTCONTACT_ISA must be one of ['auto', 'avx2', 'avx512', 'generic'], "
                         "got %R",
                         v);
            Py_DECREF(v);
        }
    }
    return -1;
}

const char *sc_py_default_isa(void)
{
    const int isa = auto_isa();
    return isa < 0 ? NULL : sc_isa_name(isa);
}

int sc_py_available_cores(void)
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
        return CPU_COUNT(&set);
    }
#endif
#if !defined(_WIN32)
    {
        const long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? (n < SC_MAX_THREADS ? (int)n : SC_MAX_THREADS) : 1;
    }
#else
    return 1;
#endif
}

int sc_py_options(int isa, int dense, int nthreads, Py_ssize_t items, sc_options *o)
{
    int r;
    if (isa == SC_ISA_AUTO) {
        if ((isa = auto_isa()) < 0) {
            return 0;
        }
    }
    r = sc_isa_resolve(isa);
    if (r == SC_EINVAL) {
        PyErr_Format(PyExc_ValueError,
                     "isa must be -1 (auto), 0 (generic), 1 (avx2) or 2 (avx512), got %d", isa);
        return 0;
    }
    if (r == SC_EUNSUPPORTED) {
        PyErr_Format(PyExc_ValueError, "isa %s is not supported by this CPU or build",
                     sc_isa_name(isa));
        return 0;
    }
    if (dense != 0 && dense != 1) {
        PyErr_Format(PyExc_ValueError, "dense must be 0 or 1, got %d", dense);
        return 0;
    }
    if (nthreads < 0) {
        PyErr_Format(PyExc_ValueError, "num_threads must be >= 1 (or 0: every core), got %d",
                     nthreads);
        return 0;
    }
    if (nthreads == 0) {
        nthreads = sc_py_available_cores();
    }
    if (nthreads > SC_MAX_THREADS) {
        nthreads = SC_MAX_THREADS;
    }
    if (nthreads > items) {
        nthreads = items > 0 ? (int)items : 1;
    }
    o->isa = r;
    o->dense = dense;
    o->nthreads = nthreads;
    return 1;
}

double *sc_py_work(ptrdiff_t n)
{
    double *w = (double *)PyMem_RawMalloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (w == NULL) {
        PyErr_NoMemory();
    }
    return w;
}

PyArrayObject *sc_py_zeros(int nd, const npy_intp *dims)
{
    return (PyArrayObject *)PyArray_ZEROS(nd, (npy_intp *)dims, NPY_DOUBLE, 0);
}

PyArrayObject *sc_py_empty(int nd, const npy_intp *dims)
{
    return (PyArrayObject *)PyArray_SimpleNew(nd, (npy_intp *)dims, NPY_DOUBLE);
}

/* ---- the module ---- */

PyDoc_STRVAR(interrupt_polling_doc,
             "_interrupt_polling(enabled) -> bool: whether the long calls poll for signals "
             "(Ctrl-C) from the main thread; returns the previous setting (for the benchmark "
             "of the polling's cost)");

static PyObject *py_interrupt_polling(PyObject *Py_UNUSED(self), PyObject *arg)
{
    const int was = polling, on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
    polling = on;
    return PyBool_FromLong(was);
}

PyDoc_STRVAR(thread_pool_doc,
             "_thread_pool(enabled) -> bool: whether the parallel loops run on the persistent "
             "thread pool (else threads started per call; the same results); returns the "
             "previous setting (for the benchmark of the pool)");

static PyObject *py_thread_pool(PyObject *Py_UNUSED(self), PyObject *arg)
{
    const int on = PyObject_IsTrue(arg);
    if (on < 0) {
        return NULL;
    }
    return PyBool_FromLong(sc__parallel_pool(on));
}

static PyMethodDef module_methods[] = {
    {"_interrupt_polling", py_interrupt_polling, METH_O, interrupt_polling_doc},
    {"_thread_pool", py_thread_pool, METH_O, thread_pool_doc},
    {NULL, NULL, 0, NULL},
};

/* the main thread's identifier, from threading.main_thread(); 0 with an exception */
static int find_main_thread(void)
{
    PyObject *th = PyImport_ImportModule("threading"), *mt = NULL, *id = NULL;
    if (th != NULL && (mt = PyObject_CallMethod(th, "main_thread", NULL)) != NULL &&
        (id = PyObject_GetAttrString(mt, "ident")) != NULL) {
        main_thread_ident = PyLong_AsUnsignedLong(id);
    }
    Py_XDECREF(th);
    Py_XDECREF(mt);
    Py_XDECREF(id);
    return !PyErr_Occurred();
}

static PyMethodDef *const tables[] = {
    sc_py_cloud_methods, sc_py_ssdf_methods,  sc_py_contact_methods, sc_py_model_methods,
    sc_py_ilqr_methods,  sc_py_batch_methods, module_methods};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_core",
    .m_doc = "Compiled core of softcontact (private; use the softcontact package).",
    .m_size = -1,
};

/* the integer constants of the module */
static int add_constants(PyObject *m)
{
    static const struct {
        const char *name;
        int value;
    } ints[] = {{"ISA_AUTO", SC_ISA_AUTO},
                {"ISA_GENERIC", SC_ISA_GENERIC},
                {"ISA_AVX2", SC_ISA_AVX2},
                {"ISA_AVX512", SC_ISA_AVX512},
                {"MAX_THREADS", SC_MAX_THREADS},
                {"SC_OK", SC_OK},
                {"SC_EINVAL", SC_EINVAL},
                {"SC_ENOMEM", SC_ENOMEM},
                {"SC_ENONFINITE", SC_ENONFINITE},
                {"SC_ENOTUNIT", SC_ENOTUNIT},
                {"SC_EUNSUPPORTED", SC_EUNSUPPORTED},
                {"SC_EDIVERGED", SC_EDIVERGED},
                {"SC_EINTERRUPTED", SC_EINTERRUPTED},
                {"SC_ERANGE", SC_ERANGE}};
    /* the valid ranges (sc_common.h), which the Python layer checks with the same numbers */
    static const struct {
        const char *name;
        double value;
    } floats[] = {{"UNIT_TOL", SC_UNIT_TOL},
                  {"COORD_MAX", SC_COORD_MAX},
                  {"REACH_MAX", SC_REACH_MAX},
                  {"EPS_MIN", SC_EPS_MIN},
                  {"EPS_MAX", SC_EPS_MAX},
                  {"LENGTH_MIN", SC_LENGTH_MIN},
                  {"LENGTH_MAX", SC_LENGTH_MAX},
                  {"STIFFNESS_MIN", SC_STIFFNESS_MIN},
                  {"STIFFNESS_MAX", SC_STIFFNESS_MAX},
                  {"DAMPING_MAX", SC_DAMPING_MAX},
                  {"FRICTION_MAX", SC_FRICTION_MAX},
                  {"SLIP_MIN", SC_SLIP_MIN},
                  {"SLIP_MAX", SC_SLIP_MAX},
                  {"SPEED_MAX", SC_SPEED_MAX},
                  {"FORCE_MAX", SC_FORCE_MAX},
                  {"MASS_MIN", SC_MASS_MIN},
                  {"MASS_MAX", SC_MASS_MAX},
                  {"DT_MIN", SC_DT_MIN},
                  {"DT_MAX", SC_DT_MAX},
                  {"GRAVITY_MAX", SC_GRAVITY_MAX}};
    size_t k;
    for (k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        if (PyModule_AddIntConstant(m, ints[k].name, ints[k].value) < 0) {
            return -1;
        }
    }
    for (k = 0; k < sizeof floats / sizeof floats[0]; k++) {
        PyObject *v = PyFloat_FromDouble(floats[k].value);
        const int st = v == NULL ? -1 : PyModule_AddObjectRef(m, floats[k].name, v);
        Py_XDECREF(v);
        if (st < 0) {
            return -1;
        }
    }
    return PyModule_AddStringConstant(m, "VERSION", "0.1.0");
}

PyMODINIT_FUNC PyInit__core(void); /* the one exported symbol */

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m;
    size_t k;
    import_array();
    m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    for (k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        if (PyModule_AddFunctions(m, tables[k]) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    sc_py_NumericalError =
        PyErr_NewException("softcontact.NumericalError", PyExc_ArithmeticError, NULL);
    sc_py_DivergenceError =
        sc_py_NumericalError == NULL
            ? NULL
            : PyErr_NewException("softcontact.DivergenceError", sc_py_NumericalError, NULL);
    if (sc_py_DivergenceError == NULL || !find_main_thread() ||
        PyModule_AddObjectRef(m, "NumericalError", sc_py_NumericalError) < 0 ||
        PyModule_AddObjectRef(m, "DivergenceError", sc_py_DivergenceError) < 0 ||
        add_constants(m) < 0) {
        Py_XDECREF(sc_py_NumericalError);
        Py_XDECREF(sc_py_DivergenceError);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
