/* Eager operations on Arrays without the Python layers between `jnp` and NumPy.
 *
 * An eager `jnp.add(x, y)` on two small Arrays spends most of its time outside NumPy: the
 * `jnp` wrapper, `Primitive.bind`, the eval trace's signature check, the impl's wrapper that
 * silences NumPy's floating-point warnings, NumPy's own dispatch to a type-specific loop, and
 * the Array made for the result. The kernels here do the same work in one C call, for the
 * cases the Python code has already vouched for (the `jnp` wrapper calls a kernel only for
 * operand dtypes its own fast path accepts); every other case makes a kernel answer None and
 * the caller goes on in Python. Their Python twins are the paths they short-cut:
 *
 * - `ElementwiseKernel(context, ufunc, quiet, weak_if_all_weak)(x[, y])`: an element-wise
 *   primitive whose impl is the NumPy ufunc `ufunc` (`EvalTrace.process_primitive` calling
 *   `quiet(ufunc)` or `ufunc`), for Arrays of one real dtype whose shapes are equal or rank 0.
 *   It calls the ufunc's own inner loop for that dtype (the loop NumPy picks for operands of
 *   one dtype, so the values are NumPy's, bit for bit). `quiet`: floating-point flags raised
 *   are ignored (XLA's silence); else a raised flag makes the kernel decline, so that the
 *   Python path warns as NumPy would.
 * - `ReductionKernel(context, impl)(x, axes)`: a reduction primitive's impl called on the
 *   Array's value (axes None: all of them), its result wrapped as a strong Array, as `jnp`'s
 *   reductions' results are.
 *
 * `EagerContext(Array, trace_holder, trace_name, eval_trace)` is what every kernel checks
 * first: that `getattr(trace_holder, trace_name)` (the current trace) is the eval trace, and
 * that eager checks (`jax_debug_nans`, `jax_debug_infs`) are off; `configure(enabled,
 * max_bytes)` mirrors those options and `tracejit_max_array_bytes`.
 */
#include "accel.h"

#include <fenv.h>
#include <structmember.h>

/* The layout of ufunc objects only: this file calls none of NumPy's ufunc API. */
#define NO_IMPORT_UFUNC
#include <numpy/ufuncobject.h>

#define LOOP_TYPES 32 /* type numbers of NumPy's built-in dtypes (NPY_NTYPES_LEGACY: 24) */

/* --- EagerContext ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyTypeObject *array_type;
    Py_ssize_t value_offset; /* of the slots `_value` and `weak_type` in an Array */
    Py_ssize_t weak_offset;
    PyObject *trace_holder;
    PyObject *trace_name;
    PyObject *eval_trace;
    int enabled;
    npy_intp max_bytes;
} EagerContext;

/* The offset of the `__slots__` member `name` of `type`, or -1 with an exception set. */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL)
        return -1;
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
        ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX)
        offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    else
        PyErr_Format(PyExc_TypeError, "EagerContext: %s.%s is not a slot", type->tp_name, name);
    Py_DECREF(descr);
    return offset;
}

static PyObject *context_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyTypeObject *array_type;
    PyObject *trace_holder, *trace_name, *eval_trace;
    if (!PyArg_ParseTuple(args, "O!OUO:EagerContext", &PyType_Type, &array_type, &trace_holder,
                          &trace_name, &eval_trace))
        return NULL;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "EagerContext takes no keyword arguments");
        return NULL;
    }
    Py_ssize_t value_offset = slot_offset(array_type, "_value");
    Py_ssize_t weak_offset = value_offset < 0 ? -1 : slot_offset(array_type, "weak_type");
    if (weak_offset < 0)
        return NULL;
    EagerContext *self = (EagerContext *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->array_type = (PyTypeObject *)Py_NewRef(array_type);
    self->value_offset = value_offset;
    self->weak_offset = weak_offset;
    self->trace_holder = Py_NewRef(trace_holder);
    self->trace_name = Py_NewRef(trace_name);
    PyUnicode_InternInPlace(&self->trace_name);
    self->eval_trace = Py_NewRef(eval_trace);
    self->enabled = 1;
    self->max_bytes = NPY_MAX_INTP;
    return (PyObject *)self;
}

static void context_dealloc(EagerContext *self)
{
    Py_XDECREF(self->array_type);
    Py_XDECREF(self->trace_holder);
    Py_XDECREF(self->trace_name);
    Py_XDECREF(self->eval_trace);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *context_configure(EagerContext *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "configure(enabled, max_bytes) takes 2 arguments");
        return NULL;
    }
    int enabled = PyObject_IsTrue(args[0]);
    if (enabled < 0)
        return NULL;
    long long max_bytes = PyLong_AsLongLong(args[1]);
    if (max_bytes == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return NULL;
        PyErr_Clear();
        max_bytes = NPY_MAX_INTP;
    }
    self->enabled = enabled;
    self->max_bytes = max_bytes > NPY_MAX_INTP ? NPY_MAX_INTP : (npy_intp)max_bytes;
    Py_RETURN_NONE;
}

static PyMethodDef context_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))context_configure, METH_FASTCALL,
     "configure(enabled, max_bytes): whether kernels may run (no eager value checks) and the\n"
     "most bytes a result may take."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject EagerContext_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tracejit._src._accel.EagerContext",
    .tp_basicsize = sizeof(EagerContext),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "EagerContext(Array, trace_holder, trace_name, eval_trace): what eager kernels\n"
              "check before running, and how they read and make Arrays.",
    .tp_new = context_new,
    .tp_dealloc = (destructor)context_dealloc,
    .tp_methods = context_methods,
};

/* Whether kernels may run now: the eval trace is the current one and no value checks are on.
 * -1 with an exception set if the current trace cannot be read. */
static int eager_now(EagerContext *context)
{
    if (!context->enabled)
        return 0;
    PyObject *trace = PyObject_GetAttr(context->trace_holder, context->trace_name);
    if (trace == NULL)
        return -1;
    int is_eval = trace == context->eval_trace;
    Py_DECREF(trace);
    return is_eval;
}

/* The NumPy value of an operand that is exactly an Array, or NULL (borrowed). */
static PyObject *array_value(EagerContext *context, PyObject *operand)
{
    if (Py_TYPE(operand) != context->array_type)
        return NULL;
    return *(PyObject **)((char *)operand + context->value_offset);
}

/* A new Array holding `value` (a new reference, which this steals) with the weak type. */
static PyObject *make_array(EagerContext *context, PyObject *value, int weak)
{
    PyObject *array = context->array_type->tp_alloc(context->array_type, 0);
    if (array == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    *(PyObject **)((char *)array + context->value_offset) = value;
    *(PyObject **)((char *)array + context->weak_offset) = Py_NewRef(weak ? Py_True : Py_False);
    return array;
}

/* --- ElementwiseKernel --------------------------------------------------------------------- */

typedef struct {
    PyUFuncGenericFunction function; /* NULL: no loop for this input type */
    void *data;
    int out_type;
} loop;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    EagerContext *context;
    PyObject *ufunc;
    int nin;
    int quiet;
    int weak_if_all_weak;
    loop loops[LOOP_TYPES];
} ElementwiseKernel;

/* Bool, integers and the float16/32/64 types: the dtypes whose loops kernels call (complex
 * arithmetic follows XLA's rules in tracejit, long double is no JAX dtype). */
static int is_real_type(int type_num)
{
    return (type_num >= NPY_BOOL && type_num <= NPY_ULONGLONG) || type_num == NPY_HALF ||
           type_num == NPY_FLOAT || type_num == NPY_DOUBLE;
}

/* For each real type, the first loop of `ufunc` whose inputs all have that type (the loop
 * NumPy's type resolution picks for such operands) and whose output is real. */
static void find_loops(PyUFuncObject *ufunc, loop *loops)
{
    for (int i = 0; i < ufunc->ntypes; i++) {
        const char *types = ufunc->types + (Py_ssize_t)i * ufunc->nargs;
        int in_type = types[0], out_type = types[ufunc->nin];
        int same = 1;
        for (int k = 1; k < ufunc->nin; k++)
            same &= types[k] == in_type;
        if (!same || !is_real_type(in_type) || !is_real_type(out_type) ||
            loops[in_type].function != NULL)
            continue;
        loops[in_type] = (loop){ufunc->functions[i], ufunc->data[i], out_type};
    }
}

static PyObject *elementwise_call(ElementwiseKernel *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames);

/* Whether `object` is a NumPy ufunc (1), not one (0), or -1 with an exception set. */
static int is_ufunc(PyObject *object)
{
    PyObject *numpy = PyImport_ImportModule("numpy");
    PyObject *ufunc_type = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "ufunc");
    Py_XDECREF(numpy);
    if (ufunc_type == NULL)
        return -1;
    int is = PyObject_IsInstance(object, ufunc_type);
    Py_DECREF(ufunc_type);
    return is;
}

static PyObject *elementwise_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    EagerContext *context;
    PyObject *ufunc;
    int quiet, weak_if_all_weak;
    if (!PyArg_ParseTuple(args, "O!Opp:ElementwiseKernel", &EagerContext_Type, &context, &ufunc,
                          &quiet, &weak_if_all_weak))
        return NULL;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "ElementwiseKernel takes no keyword arguments");
        return NULL;
    }
    int ufunc_given = is_ufunc(ufunc);
    if (ufunc_given <= 0) {
        if (ufunc_given == 0)
            PyErr_SetString(PyExc_TypeError, "ElementwiseKernel: not a NumPy ufunc");
        return NULL;
    }
    PyUFuncObject *u = (PyUFuncObject *)ufunc;
    if (u->nout != 1 || u->nin < 1 || u->nin > 2 || u->core_enabled) {
        PyErr_Format(PyExc_ValueError, "ElementwiseKernel: %s is not a unary or binary ufunc",
                     u->name);
        return NULL;
    }
    ElementwiseKernel *self = (ElementwiseKernel *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)elementwise_call;
    self->context = (EagerContext *)Py_NewRef(context);
    self->ufunc = Py_NewRef(ufunc);
    self->nin = u->nin;
    self->quiet = quiet;
    self->weak_if_all_weak = weak_if_all_weak;
    find_loops(u, self->loops);
    return (PyObject *)self;
}

static void elementwise_dealloc(ElementwiseKernel *self)
{
    Py_XDECREF(self->context);
    Py_XDECREF(self->ufunc);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* An operand of a kernel: its ndarray, its data and its stride in the loop. */
typedef struct {
    PyArrayObject *value;
    char *data;
    npy_intp step;
} operand;

/* Reads an operand; 0 if it is not an aligned, C-contiguous, native ndarray in an Array. */
static int read_operand(EagerContext *context, PyObject *arg, operand *out)
{
    PyObject *value = array_value(context, arg);
    if (value == NULL || !PyArray_CheckExact(value))
        return 0;
    PyArrayObject *array = (PyArrayObject *)value;
    if (!PyArray_IS_C_CONTIGUOUS(array) || !PyArray_ISALIGNED(array) ||
        !PyArray_ISNBO(PyArray_DESCR(array)->byteorder))
        return 0;
    *out = (operand){array, PyArray_BYTES(array), PyArray_ITEMSIZE(array)};
    return 1;
}

/* The operand whose shape the result has (the other one must have it too, or rank 0), or NULL
 * when the shapes do not fit so. Rank-0 operands are read with a zero stride, as NumPy's
 * ufuncs read them: some loops take another path for them (float16 NaNs' signs differ). */
static PyArrayObject *result_shape(operand *operands, int nin)
{
    for (int k = 0; k < nin; k++)
        if (PyArray_NDIM(operands[k].value) == 0)
            operands[k].step = 0;
    if (nin == 1)
        return operands[0].value;
    PyArrayObject *x = operands[0].value, *y = operands[1].value;
    if (PyArray_NDIM(y) == 0)
        return x;
    if (PyArray_NDIM(x) == 0)
        return y;
    if (PyArray_NDIM(x) != PyArray_NDIM(y) ||
        !PyArray_CompareLists(PyArray_DIMS(x), PyArray_DIMS(y), PyArray_NDIM(x)))
        return NULL;
    return x;
}

/* Whether the operands are Arrays all weakly typed (-1 with an exception set). */
static int all_weak(EagerContext *context, PyObject *const *args, int nin)
{
    for (int k = 0; k < nin; k++) {
        PyObject *weak = *(PyObject **)((char *)args[k] + context->weak_offset);
        int truth = weak == NULL ? 0 : PyObject_IsTrue(weak);
        if (truth <= 0)
            return truth;
    }
    return 1;
}

/* Runs `kernel`'s loop over the operands into a new array shaped like `shape`; NULL with no
 * exception set if the loop raised a floating-point flag that a non-quiet kernel must not
 * ignore. */
static PyObject *run_loop(ElementwiseKernel *self, loop *kernel, operand *operands,
                          PyArrayObject *shape)
{
    PyArray_Descr *out_descr = PyArray_DescrFromType(kernel->out_type);
    if (out_descr == NULL)
        return NULL;
    PyObject *out = PyArray_NewFromDescr(&PyArray_Type, out_descr, PyArray_NDIM(shape),
                                         PyArray_DIMS(shape), NULL, NULL, 0, NULL);
    if (out == NULL)
        return NULL;
    npy_intp count = PyArray_SIZE(shape);
    char *data[3];
    npy_intp steps[3];
    for (int k = 0; k < self->nin; k++) {
        data[k] = operands[k].data;
        steps[k] = operands[k].step;
    }
    data[self->nin] = PyArray_BYTES((PyArrayObject *)out);
    steps[self->nin] = PyArray_ITEMSIZE((PyArrayObject *)out);
    feclearexcept(FE_ALL_EXCEPT);
    if (count > 500) { /* NumPy's threshold for letting other threads run */
        Py_BEGIN_ALLOW_THREADS
        kernel->function(data, &count, steps, kernel->data);
        Py_END_ALLOW_THREADS
    } else {
        kernel->function(data, &count, steps, kernel->data);
    }
    int raised = fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
    feclearexcept(FE_ALL_EXCEPT);
    if (raised && !self->quiet) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* The kernel's result for operands read from the Arrays `args`, or None. */
static PyObject *compute_elementwise(ElementwiseKernel *self, PyObject *const *args,
                                     operand *operands)
{
    EagerContext *context = self->context;
    int type_num = PyArray_TYPE(operands[0].value);
    if (type_num >= LOOP_TYPES || self->loops[type_num].function == NULL ||
        (self->nin == 2 && PyArray_TYPE(operands[1].value) != type_num))
        Py_RETURN_NONE;
    PyArrayObject *shape = result_shape(operands, self->nin);
    if (shape == NULL || PyArray_NBYTES(shape) > context->max_bytes)
        Py_RETURN_NONE;
    int weak = self->weak_if_all_weak ? all_weak(context, args, self->nin) : 0;
    if (weak < 0)
        return NULL;
    PyObject *out = run_loop(self, &self->loops[type_num], operands, shape);
    if (out == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    return make_array(context, out, weak);
}

static PyObject *elementwise_call(ElementwiseKernel *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != self->nin || kwnames != NULL) {
        PyErr_Format(PyExc_TypeError, "this kernel takes %d positional arguments", self->nin);
        return NULL;
    }
    EagerContext *context = self->context;
    int now = eager_now(context);
    if (now <= 0)
        return now < 0 ? NULL : Py_NewRef(Py_None);
    operand operands[2];
    for (int k = 0; k < self->nin; k++)
        if (!read_operand(context, args[k], &operands[k]))
            Py_RETURN_NONE;
    /* The values are the Arrays' (borrowed): held while other threads may run. */
    for (int k = 0; k < self->nin; k++)
        Py_INCREF(operands[k].value);
    PyObject *result = compute_elementwise(self, args, operands);
    for (int k = 0; k < self->nin; k++)
        Py_DECREF(operands[k].value);
    return result;
}

static PyTypeObject ElementwiseKernel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tracejit._src._accel.ElementwiseKernel",
    .tp_basicsize = sizeof(ElementwiseKernel),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "ElementwiseKernel(context, ufunc, quiet, weak_if_all_weak)(x[, y]): the\n"
              "element-wise primitive computed by `ufunc` on Arrays of one real dtype, or\n"
              "None where the kernel declines.",
    .tp_new = elementwise_new,
    .tp_dealloc = (destructor)elementwise_dealloc,
    .tp_vectorcall_offset = offsetof(ElementwiseKernel, vectorcall),
    .tp_call = PyVectorcall_Call,
};

/* --- ReductionKernel ----------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    EagerContext *context;
    PyObject *impl;
    PyObject *axes_keyword; /* ("axes",) */
} ReductionKernel;

static PyObject *reduction_call(ReductionKernel *self, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames);

static PyObject *reduction_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    EagerContext *context;
    PyObject *impl;
    if (!PyArg_ParseTuple(args, "O!O:ReductionKernel", &EagerContext_Type, &context, &impl))
        return NULL;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "ReductionKernel takes no keyword arguments");
        return NULL;
    }
    PyObject *axes_keyword = Py_BuildValue("(s)", "axes");
    if (axes_keyword == NULL)
        return NULL;
    ReductionKernel *self = (ReductionKernel *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(axes_keyword);
        return NULL;
    }
    self->vectorcall = (vectorcallfunc)reduction_call;
    self->context = (EagerContext *)Py_NewRef(context);
    self->impl = Py_NewRef(impl);
    self->axes_keyword = axes_keyword;
    return (PyObject *)self;
}

static void reduction_dealloc(ReductionKernel *self)
{
    Py_XDECREF(self->context);
    Py_XDECREF(self->impl);
    Py_XDECREF(self->axes_keyword);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* (0, 1, ..., ndim - 1) */
static PyObject *all_axes(int ndim)
{
    PyObject *axes = PyTuple_New(ndim);
    for (int i = 0; axes != NULL && i < ndim; i++) {
        PyObject *axis = PyLong_FromLong(i);
        if (axis == NULL)
            Py_CLEAR(axes);
        else
            PyTuple_SET_ITEM(axes, i, axis);
    }
    return axes;
}

/* Whether `result` (an ndarray or a NumPy scalar) has the type number `type_num` and at most
 * `max_bytes` bytes. */
static int is_result_of_type(PyObject *result, int type_num, npy_intp max_bytes)
{
    if (PyArray_CheckExact(result))
        return PyArray_TYPE((PyArrayObject *)result) == type_num &&
               PyArray_NBYTES((PyArrayObject *)result) <= max_bytes;
    if (!PyArray_IsScalar(result, Generic))
        return 0;
    PyArray_Descr *descr = PyArray_DescrFromScalar(result);
    if (descr == NULL) {
        PyErr_Clear();
        return 0;
    }
    int same = descr->type_num == type_num;
    Py_DECREF(descr);
    return same;
}

static PyObject *reduction_call(ReductionKernel *self, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a reduction kernel takes (x, axes)");
        return NULL;
    }
    EagerContext *context = self->context;
    int now = eager_now(context);
    if (now <= 0)
        return now < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *value = array_value(context, args[0]);
    if (value == NULL || !PyArray_CheckExact(value))
        Py_RETURN_NONE;
    PyObject *axes = args[1] == Py_None ? all_axes(PyArray_NDIM((PyArrayObject *)value))
                                        : Py_NewRef(args[1]);
    if (axes == NULL)
        return NULL;
    int type_num = PyArray_TYPE((PyArrayObject *)value);
    PyObject *impl_args[2] = {Py_NewRef(value), axes}; /* (held while the impl runs) */
    PyObject *result = PyObject_Vectorcall(self->impl, impl_args, 1, self->axes_keyword);
    Py_DECREF(value);
    Py_DECREF(axes);
    if (result == NULL)
        return NULL;
    if (!is_result_of_type(result, type_num, context->max_bytes)) {
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    return make_array(context, result, 0);
}

static PyTypeObject ReductionKernel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tracejit._src._accel.ReductionKernel",
    .tp_basicsize = sizeof(ReductionKernel),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "ReductionKernel(context, impl)(x, axes): the reduction `impl(value, axes=...)`\n"
              "of an Array over `axes` (None: all), as a strong Array of the operand's dtype,\n"
              "or None where the kernel declines.",
    .tp_new = reduction_new,
    .tp_dealloc = (destructor)reduction_dealloc,
    .tp_vectorcall_offset = offsetof(ReductionKernel, vectorcall),
    .tp_call = PyVectorcall_Call,
};

/* --- one-pass loops of composites ------------------------------------------------------------
 * Some `jnp` composites take several NumPy passes eagerly where one C pass gives the same bits:
 * `sign` of floats (the impl of `sign`; Python twin `_float_sign` in lax/elementwise.py) and
 * `fmax`/`fmin` (`where(x1 > x2 | x2 != x2, x1, x2)`, `<` for fmin; Python twin
 * `_ignoring_nans_ties_to_second` in numpy/arithmetic.py). Each takes C-contiguous, aligned,
 * native float32 or float64 arrays (both of one shape and dtype) and returns a new array, or
 * None for anything else. */

/* The loops are compiled for AVX-512 and AVX2 too where the compiler can pick one at load time
 * (GCC's and Clang's function multi-versioning on x86-64): NumPy's own loops use those. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef VECTOR_CLONES
#define VECTOR_CLONES
#endif

#define SIGN_LOOP(name, type)                                                                    \
    VECTOR_CLONES static void name(char *const *data, npy_intp count)                            \
    {                                                                                            \
        const type *x = (const type *)data[0];                                                   \
        type *out = (type *)data[1];                                                             \
        for (npy_intp i = 0; i < count; i++)                                                     \
            out[i] = x[i] > 0 ? (type)1 : x[i] < 0 ? (type)-1 : x[i]; /* ±0 and NaN: x */       \
    }

#define SELECT_LOOP(name, type, op)                                                              \
    VECTOR_CLONES static void name(char *const *data, npy_intp count)                            \
    {                                                                                            \
        const type *x = (const type *)data[0], *y = (const type *)data[1];                       \
        type *out = (type *)data[2];                                                             \
        for (npy_intp i = 0; i < count; i++)                                                     \
            out[i] = ((x[i] op y[i]) | (y[i] != y[i])) ? x[i] : y[i];                            \
    }

SIGN_LOOP(sign_float, float)
SIGN_LOOP(sign_double, double)
SELECT_LOOP(fmax_float, float, >)
SELECT_LOOP(fmax_double, double, >)
SELECT_LOOP(fmin_float, float, <)
SELECT_LOOP(fmin_double, double, <)

typedef void (*float_loop)(char *const *data, npy_intp count);

/* Whether `object` is an ndarray a one-pass loop takes, of the type and shape of `like` when
 * given. */
static int takes(PyObject *object, PyArrayObject *like)
{
    if (!PyArray_CheckExact(object))
        return 0;
    PyArrayObject *array = (PyArrayObject *)object;
    int type_num = PyArray_TYPE(array);
    if ((type_num != NPY_FLOAT && type_num != NPY_DOUBLE) || !PyArray_IS_C_CONTIGUOUS(array) ||
        !PyArray_ISALIGNED(array) || !PyArray_ISNBO(PyArray_DESCR(array)->byteorder))
        return 0;
    return like == NULL ||
           (PyArray_TYPE(like) == type_num && PyArray_NDIM(like) == PyArray_NDIM(array) &&
            PyArray_CompareLists(PyArray_DIMS(like), PyArray_DIMS(array), PyArray_NDIM(array)));
}

/* Runs `loops[0]` (float32) or `loops[1]` (float64) over `nin` operands into a new array. */
static PyObject *one_pass(PyObject *const *args, Py_ssize_t nargs, int nin,
                          const float_loop loops[2], const char *name)
{
    if (nargs != nin) {
        PyErr_Format(PyExc_TypeError, "%s takes %d arguments", name, nin);
        return NULL;
    }
    for (int k = 0; k < nin; k++)
        if (!takes(args[k], k == 0 ? NULL : (PyArrayObject *)args[0]))
            Py_RETURN_NONE;
    PyArrayObject *x = (PyArrayObject *)args[0];
    PyObject *out = PyArray_NewLikeArray(x, NPY_CORDER, NULL, 0);
    if (out == NULL)
        return NULL;
    char *data[3];
    for (int k = 0; k < nin; k++)
        data[k] = PyArray_BYTES((PyArrayObject *)args[k]);
    data[nin] = PyArray_BYTES((PyArrayObject *)out);
    float_loop loop = loops[PyArray_TYPE(x) == NPY_DOUBLE];
    npy_intp count = PyArray_SIZE(x);
    Py_BEGIN_ALLOW_THREADS
    loop(data, count);
    Py_END_ALLOW_THREADS
    return out;
}

static const float_loop sign_loops[2] = {sign_float, sign_double};
static const float_loop fmax_loops[2] = {fmax_float, fmax_double};
static const float_loop fmin_loops[2] = {fmin_float, fmin_double};

static PyObject *float_sign(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_pass(args, nargs, 1, sign_loops, "float_sign");
}

static PyObject *select_fmax(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_pass(args, nargs, 2, fmax_loops, "fmax");
}

static PyObject *select_fmin(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return one_pass(args, nargs, 2, fmin_loops, "fmin");
}

/* --- the power of floats --------------------------------------------------------------------
 * The impl of `pow` (`_pow_impl` in lax/binary.py, the Python twin) computes np.power, then
 * looks for bases where NumPy's power differs from C's (zero and -inf ones) with a reduction
 * over the bases, a tenth of the power's time. Here NumPy's own power loop runs over blocks of
 * the operands, and each block's bases are looked at while they are in the cache. */

#define POWER_BLOCK 4096 /* elements: a multiple of every vector width */

#define AT_MOST_ZERO_SCAN(name, type)                                                            \
    VECTOR_CLONES static int name(const char *data, npy_intp count)                              \
    {                                                                                            \
        const type *x = (const type *)data;                                                      \
        int found = 0;                                                                           \
        for (npy_intp i = 0; i < count; i++)                                                     \
            found |= x[i] <= 0; /* (NaN: no) */                                                  \
        return found;                                                                            \
    }

AT_MOST_ZERO_SCAN(float_at_most_zero, float)
AT_MOST_ZERO_SCAN(double_at_most_zero, double)

static PyObject *power_scanning_bases(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "power_scanning_bases takes (np.power, x, y)");
        return NULL;
    }
    int ufunc_given = is_ufunc(args[0]);
    if (ufunc_given <= 0)
        return ufunc_given < 0 ? NULL : PyErr_Format(PyExc_TypeError, "not a NumPy ufunc");
    if (!takes(args[1], NULL) || !takes(args[2], (PyArrayObject *)args[1]))
        Py_RETURN_NONE;
    PyArrayObject *x = (PyArrayObject *)args[1], *y = (PyArrayObject *)args[2];
    int type_num = PyArray_TYPE(x);
    loop loops[LOOP_TYPES] = {{0}};
    find_loops((PyUFuncObject *)args[0], loops);
    if (loops[type_num].function == NULL || loops[type_num].out_type != type_num)
        Py_RETURN_NONE;
    PyObject *out = PyArray_NewLikeArray(x, NPY_CORDER, NULL, 0);
    if (out == NULL)
        return NULL;
    npy_intp count = PyArray_SIZE(x), itemsize = PyArray_ITEMSIZE(x);
    npy_intp steps[3] = {itemsize, itemsize, itemsize};
    char *data[3] = {PyArray_BYTES(x), PyArray_BYTES(y), PyArray_BYTES((PyArrayObject *)out)};
    int base_at_most_zero = 0;
    Py_BEGIN_ALLOW_THREADS
    for (npy_intp start = 0; start < count; start += POWER_BLOCK) {
        npy_intp block = count - start < POWER_BLOCK ? count - start : POWER_BLOCK;
        char *at[3] = {data[0] + start * itemsize, data[1] + start * itemsize,
                       data[2] + start * itemsize};
        loops[type_num].function(at, &block, steps, loops[type_num].data);
        base_at_most_zero |= type_num == NPY_FLOAT ? float_at_most_zero(at[0], block)
                                                   : double_at_most_zero(at[0], block);
    }
    Py_END_ALLOW_THREADS
    feclearexcept(FE_ALL_EXCEPT); /* (the impl is quiet) */
    PyObject *result = Py_BuildValue("(NO)", out, base_at_most_zero ? Py_True : Py_False);
    return result;
}

static PyMethodDef one_pass_methods[] = {
    {"power_scanning_bases", (PyCFunction)(void (*)(void))power_scanning_bases, METH_FASTCALL,
     "power_scanning_bases(np.power, x, y) -> (np.power(x, y), whether a base is <= 0), or\n"
     "None unless x and y are contiguous float32/float64 arrays of one shape and dtype."},
    {"float_sign", (PyCFunction)(void (*)(void))float_sign, METH_FASTCALL,
     "float_sign(x): 1 or -1 with the sign of x, x itself where it is ±0 or NaN; None where\n"
     "x is not a contiguous float32/float64 array."},
    {"fmax", (PyCFunction)(void (*)(void))select_fmax, METH_FASTCALL,
     "fmax(x1, x2): x1 where x1 > x2 or x2 is NaN, else x2; None unless both are contiguous\n"
     "float32/float64 arrays of one shape and dtype."},
    {"fmin", (PyCFunction)(void (*)(void))select_fmin, METH_FASTCALL,
     "fmin(x1, x2): x1 where x1 < x2 or x2 is NaN, else x2; as fmax."},
    {NULL, NULL, 0, NULL},
};

int accel_add_eager(PyObject *module)
{
    if (PyModule_AddFunctions(module, one_pass_methods) < 0)
        return -1;
    PyTypeObject *types[] = {&EagerContext_Type, &ElementwiseKernel_Type, &ReductionKernel_Type};
    const char *names[] = {"EagerContext", "ElementwiseKernel", "ReductionKernel"};
    for (int i = 0; i < 3; i++) {
        if (PyType_Ready(types[i]) < 0)
            return -1;
        if (PyModule_AddObjectRef(module, names[i], (PyObject *)types[i]) < 0)
            return -1;
    }
    return 0;
}
