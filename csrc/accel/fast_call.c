/* The steady call of one signature of a jitted function, in C: walking the arguments along
 * the structure the signature was traced with, checking each leaf's signature and handing its
 * buffer to the program (dispatch.c's `Program`), which runs.
 *
 * Python twin: `PjitFunction.__call__` in tracejit/_src/jit.py (the arguments flattened and
 * their signature looked up) and `CompiledProgram.__call__` in dispatch.py. Every case it
 * does not take (a first call, keyword or static arguments, NumPy arrays and other host
 * values, donation, several devices, tracing, debug checks) it declines by returning
 * NotImplemented, and Python handles the call as before; only speed changes.
 *
 * Leaves are device Arrays and Python scalars (bool, int, float, complex). Once the whole walk
 * has matched (so that a call it declines transfers nothing), each scalar becomes a buffer:
 * made here from its bytes for the common dtypes (the last value's buffer kept per argument,
 * so a loop passing the same value transfers once), else by the program's `transfer` (Python:
 * other dtypes, values out of range, the transfer guard when it is set). Nodes are tuples, lists, dicts and None, walked
 * here, and any other pytree node (a namedtuple, a registered class) through its own flatten
 * function, whose static part (aux data) must equal the one recorded, as treedef equality
 * asks.
 *
 * Buffers passed to PJRT are held (a reference each) while the GIL is released around the
 * execution, so a thread deleting an Array meanwhile cannot destroy one; a program's argument
 * table is used by one call at a time (`busy`, read and written under the GIL), and a second
 * concurrent call declines to the Python path, which has its own tables.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "dispatch.h"

static PyObject *str_alive, *str_disable_jit, *str_trace_context, *str_trace,
    *str_invalid_value_checks;

/* The arguments' pytree structure, one code per node in depth-first order: a leaf, None, a
 * tuple, list or dict (exact types), or another pytree node, and its number of children. Each
 * dict node has its sorted keys in `node_data`, each other node (type, flatten, aux data), in
 * the same order. Python's `tree_flatten` visits these nodes in the same order. */
enum { NODE_LEAF, NODE_NONE, NODE_TUPLE, NODE_LIST, NODE_DICT, NODE_CUSTOM, NODE_KINDS };

static Py_ssize_t node_code(PyObject *node)
{
    if (PyTuple_CheckExact(node))
        return NODE_TUPLE + NODE_KINDS * PyTuple_GET_SIZE(node);
    if (PyList_CheckExact(node))
        return NODE_LIST + NODE_KINDS * PyList_GET_SIZE(node);
    if (PyDict_CheckExact(node))
        return NODE_DICT + NODE_KINDS * PyDict_GET_SIZE(node);
    return node == Py_None ? NODE_NONE : NODE_LEAF;
}

/* Child `i` of a tuple or list, or of a dict whose sorted keys are `keys` (a new reference);
 * NULL where it is gone (a list shrank, a key is missing), with an exception only on an error. */
static PyObject *child(PyObject *node, Py_ssize_t i, PyObject *keys)
{
    PyObject *item;
    if (PyTuple_CheckExact(node))
        item = PyTuple_GET_ITEM(node, i);
    else if (PyList_CheckExact(node))
        item = i < PyList_GET_SIZE(node) ? PyList_GET_ITEM(node, i) : NULL;
    else
        item = PyDict_GetItemWithError(node, PyTuple_GET_ITEM(keys, i));
    return Py_XNewRef(item);
}

static int is_python_scalar(PyObject *x)
{
    return PyFloat_CheckExact(x) || PyLong_CheckExact(x) || PyBool_Check(x) ||
           PyComplex_CheckExact(x);
}

/* How a Python scalar argument becomes a device buffer. */
enum scalar_kind { BY_PYTHON, BOOL_BYTE, INT32, INT64, FLOAT32, FLOAT64 };

typedef struct {
    enum scalar_kind kind;
    int type;                 /* its PJRT element type */
    output_spec spec;         /* shape (), its dtype: the Buffers made */
    unsigned char last[8];    /* the bytes of the last value made here */
    PyObject *buffer;         /* their Buffer, or NULL */
} scalar_argument;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Program *program;
    PyObject *signatures;  /* a tuple: each leaf's `_signature`, a Python scalar's its type */
    Py_ssize_t scalars;    /* how many leaves are Python scalars */
    Py_ssize_t *parameter; /* per leaf: its place in the argument table, -1 where unread */
    Py_ssize_t *structure; /* node codes, depth-first */
    Py_ssize_t structure_length;
    PyObject *node_data;   /* a list: each dict's and other node's data, depth-first */
    PyObject *transfer;    /* a Python scalar -> its Buffer */
    scalar_argument *scalar; /* per leaf (used for Python scalars) */
    Py_ssize_t num_scalar;   /* its length */
    PyObject *guarded;     /* [whether the transfer guard checks transfers] */
    PyObject *unflatten;   /* outputs list -> result; None: the one output itself */
    PyObject *config, *context, *trace_context, *eval_trace_type, *eval_module;
} FastCall;

/* 1 where `object.name` is `expected` (identity), 0 where not, -1 on an error. */
static int attribute_is(PyObject *object, PyObject *name, PyObject *expected)
{
    PyObject *value = PyObject_GetAttr(object, name);
    if (value == NULL)
        return -1;
    int same = value == expected;
    Py_DECREF(value);
    return same;
}

/* Whether a call now means running the program: no `disable_jit`, no debug checks of the
 * outputs, the eval trace current, the trace context the signature was traced in. */
static int eager_and_unchanged(FastCall *self)
{
    int ok = attribute_is(self->config, str_disable_jit, Py_False);
    if (ok == 1)
        ok = attribute_is(self->config, str_trace_context, self->trace_context);
    if (ok == 1)
        ok = attribute_is(self->eval_module, str_invalid_value_checks, Py_False);
    if (ok == 1) {
        PyObject *trace = PyObject_GetAttr(self->context, str_trace);
        if (trace == NULL)
            return -1;
        ok = (PyObject *)Py_TYPE(trace) == self->eval_trace_type;
        Py_DECREF(trace);
    }
    return ok;
}

/* The PJRT buffer of a tracejit Buffer; NULL where it has none (an exception only on an
 * error). */
static void *buffer_address(Program *program, PyObject *buffer)
{
    if (Py_TYPE(buffer) != program->buffer_type)
        return NULL;
    PyObject *address = slot_get(buffer, program->buffer_slot[BUFFER_ADDRESS]);
    return address != NULL ? PyLong_AsVoidPtr(address) : NULL;
}

/* A device Array's signature, (shape, dtype, weak type), as `jit`'s `_array_signature` makes
 * it, kept in its slot (borrowed); NULL where Python must make it: a host Array, a buffer
 * whose shape or dtype is not read yet. (The outputs of a program run from Python have
 * none until their first call.) */
static PyObject *device_array_signature(Program *program, PyObject *x)
{
    PyObject *buffer = slot_get(x, program->array_slot[ARRAY_BUFFER]);
    if (Py_TYPE(x) != program->array_type || buffer == NULL ||
        Py_TYPE(buffer) != program->buffer_type)
        return NULL;
    PyObject *shape = slot_get(buffer, program->buffer_slot[BUFFER_SHAPE]);
    PyObject *dtype = slot_get(buffer, program->buffer_slot[BUFFER_DTYPE]);
    PyObject *weak_type = slot_get(x, program->array_slot[ARRAY_WEAK_TYPE]);
    if (shape == NULL || shape == Py_None || dtype == NULL || dtype == Py_None ||
        weak_type == NULL)
        return NULL;
    PyObject *signature = PyTuple_Pack(3, shape, dtype, weak_type);
    if (signature != NULL)
        *(PyObject **)((char *)x + program->array_slot[ARRAY_SIGNATURE]) = signature;
    return signature;
}

/* A walk over the arguments along the expected structure. */
typedef struct {
    FastCall *call;
    Py_ssize_t position; /* in `structure` */
    Py_ssize_t data;     /* in `node_data` */
    Py_ssize_t leaves;   /* taken: held, and an Array's buffer in the table */
    PyObject **held;
} walk;

static int take_node(walk *w, PyObject *node);

/* Leaf `x`: a device Array of the signature, its buffer's handle into the argument table
 * (where the program reads it) and the buffer held, or a Python scalar of the signature's
 * type, held. 1 taken, 0 not a leaf this path takes, -1 an error. (A buffer deleted behind its Array's back goes to PJRT, which
 * reports it, as from the Python path.) */
static int take_leaf(walk *w, PyObject *x)
{
    Program *program = w->call->program;
    PyObject *expected = PyTuple_GET_ITEM(w->call->signatures, w->leaves);
    Py_ssize_t parameter = w->call->parameter[w->leaves];
    if (PyType_Check(expected)) {
        if ((PyObject *)Py_TYPE(x) != expected)
            return 0;
        w->held[w->leaves++] = Py_NewRef(x);
        return 1;
    }
    if (Py_TYPE(x) != program->array_type && Py_TYPE(x) != program->host_array_type)
        return 0;
    PyObject *own = slot_get(x, program->array_slot[ARRAY_SIGNATURE]);
    if (own == NULL && (own = device_array_signature(program, x)) == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (own != expected) {
        int equal = PyObject_RichCompareBool(own, expected, Py_EQ);
        if (equal != 1)
            return equal;
    }
    PyObject *buffer = slot_get(x, program->array_slot[ARRAY_BUFFER]);
    void *pointer = buffer != NULL ? buffer_address(program, buffer) : NULL;
    if (pointer == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (parameter >= 0)
        program->arguments[parameter] = pointer;
    w->held[w->leaves++] = Py_NewRef(buffer);
    return 1;
}

/* The children of `node` as its `flatten` gives them (a sequence), where the aux data it gives
 * equals the recorded one; NULL otherwise, without an exception: where flatten fails, the
 * Python path flattens again and raises what there is to raise. Equal aux data that is
 * another object replaces the recorded one, so that the next call (given this call's
 * outputs, say) compares by identity. */
static PyObject *flatten_node(FastCall *call, Py_ssize_t index, PyObject *node)
{
    PyObject *recorded = PyList_GET_ITEM(call->node_data, index);
    PyObject *pair = PyObject_CallOneArg(PyTuple_GET_ITEM(recorded, 1), node);
    PyObject *children = NULL;
    if (pair != NULL && PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2) {
        PyObject *aux = PyTuple_GET_ITEM(pair, 1);
        int same = aux == PyTuple_GET_ITEM(recorded, 2);
        if (!same && PyObject_RichCompareBool(aux, PyTuple_GET_ITEM(recorded, 2), Py_EQ) == 1) {
            PyObject *update = PyTuple_Pack(3, PyTuple_GET_ITEM(recorded, 0),
                                            PyTuple_GET_ITEM(recorded, 1), aux);
            same = update != NULL && PyList_SetItem(call->node_data, index, update) == 0;
        }
        if (same)
            children = PySequence_Fast(PyTuple_GET_ITEM(pair, 0), "pytree children");
    }
    Py_XDECREF(pair);
    if (children == NULL)
        PyErr_Clear();
    return children;
}

/* A node of another pytree type, recorded as (type, flatten, aux data) at `index` of
 * `node_data`, with `count` children. */
static int take_custom(walk *w, PyObject *node, Py_ssize_t index, Py_ssize_t count)
{
    PyObject *recorded = PyList_GET_ITEM(w->call->node_data, index);
    if ((PyObject *)Py_TYPE(node) != PyTuple_GET_ITEM(recorded, 0))
        return 0;
    PyObject *children = flatten_node(w->call, index, node);
    if (children == NULL)
        return 0;
    int ok = PySequence_Fast_GET_SIZE(children) == count;
    for (Py_ssize_t i = 0; ok == 1 && i < count; i++)
        ok = take_node(w, PySequence_Fast_GET_ITEM(children, i));
    Py_DECREF(children);
    return ok;
}

static int take_node(walk *w, PyObject *node)
{
    FastCall *call = w->call;
    if (w->position >= call->structure_length)
        return 0;
    Py_ssize_t code = call->structure[w->position++];
    if (code == NODE_LEAF)
        return w->leaves < PyTuple_GET_SIZE(call->signatures) ? take_leaf(w, node) : 0;
    Py_ssize_t kind = code % NODE_KINDS, count = code / NODE_KINDS;
    if (kind == NODE_CUSTOM)
        return take_custom(w, node, w->data++, count);
    PyObject *data = kind == NODE_DICT ? PyList_GET_ITEM(call->node_data, w->data++) : NULL;
    if (node_code(node) != code)
        return 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = child(node, i, data);
        if (item == NULL)
            return PyErr_Occurred() ? -1 : 0;
        int ok = take_node(w, item);
        Py_DECREF(item);
        if (ok != 1)
            return ok;
    }
    return 1;
}

/* The bytes of Python scalar `x` in its argument's dtype: 1 made, 0 where Python makes them
 * (a value out of the dtype's range: its error or warning is Python's to give). */
static int scalar_bytes(const scalar_argument *argument, PyObject *x, unsigned char out[8])
{
    int overflow;
    long long integer;
    switch (argument->kind) {
    case BOOL_BYTE:
        out[0] = x == Py_True;
        return 1;
    case INT32:
    case INT64:
        integer = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (overflow || (integer == -1 && PyErr_Occurred()) ||
            (argument->kind == INT32 && (integer < INT32_MIN || integer > INT32_MAX))) {
            PyErr_Clear();
            return 0;
        }
        if (argument->kind == INT32) {
            int32_t narrow = (int32_t)integer;
            memcpy(out, &narrow, sizeof narrow);
        } else {
            memcpy(out, &integer, sizeof integer);
        }
        return 1;
    case FLOAT32: {
        double wide = PyFloat_AS_DOUBLE(x);
        float narrow = (float)wide;
        if (isinf(narrow) && !isinf(wide))
            return 0;
        memcpy(out, &narrow, sizeof narrow);
        return 1;
    }
    case FLOAT64: {
        double wide = PyFloat_AS_DOUBLE(x);
        memcpy(out, &wide, sizeof wide);
        return 1;
    }
    default:
        return 0;
    }
}

/* The Buffer of Python scalar `x` made here (a new reference): the last one made for this
 * argument where `x` has the same bytes. NULL where Python must make it (no exception) or on
 * an error. */
static PyObject *scalar_buffer(Program *program, scalar_argument *argument, PyObject *x)
{
    unsigned char bytes[8] = {0};
    if (!scalar_bytes(argument, x, bytes))
        return NULL;
    if (argument->buffer != NULL && memcmp(bytes, argument->last, sizeof bytes) == 0)
        return Py_NewRef(argument->buffer);
    void *pointer;
    void *error = accel_buffer_from_scalar(program, argument->type, bytes, &pointer);
    if (error != NULL)
        return accel_raise_pjrt_error(program->runtime, error);
    PyObject *buffer = accel_program_buffer(program, pointer, &argument->spec);
    if (buffer == NULL)
        return NULL;
    Py_XSETREF(argument->buffer, Py_NewRef(buffer));
    memcpy(argument->last, bytes, sizeof bytes);
    return buffer;
}

/* The held Python scalars' buffers into the argument table (and held instead), for those the
 * program reads. */
static int transfer_scalars(walk *w)
{
    FastCall *call = w->call;
    int guarded = PyObject_IsTrue(PyList_GET_ITEM(call->guarded, 0));
    if (guarded < 0)
        return -1;
    for (Py_ssize_t i = 0; i < w->leaves; i++) {
        if (!PyType_Check(PyTuple_GET_ITEM(call->signatures, i)) || call->parameter[i] < 0)
            continue;
        PyObject *buffer = guarded ? NULL : scalar_buffer(call->program, &call->scalar[i], w->held[i]);
        if (buffer == NULL && !PyErr_Occurred())
            buffer = PyObject_CallOneArg(call->transfer, w->held[i]);
        if (buffer == NULL)
            return -1;
        Py_SETREF(w->held[i], buffer);
        void *pointer = buffer_address(call->program, buffer);
        if (pointer == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "FastCall: transfer gave no device buffer");
            return -1;
        }
        call->program->arguments[call->parameter[i]] = pointer;
    }
    return 1;
}

static void release(walk *w)
{
    for (Py_ssize_t i = 0; i < w->leaves; i++)
        Py_DECREF(w->held[i]);
}

/* Fill the argument table and run; the outputs wait in the output table. Returns 1 ran, 0
 * declined, -1 an error (raised). */
static int run(FastCall *self, PyObject *args, PyObject **held)
{
    Program *program = self->program;
    walk w = {self, 0, 0, 0, held};
    int ok = take_node(&w, args);
    if (ok == 1 && w.leaves != PyTuple_GET_SIZE(self->signatures))
        ok = 0;
    if (ok == 1 && self->scalars > 0)
        ok = transfer_scalars(&w);
    void *error = NULL;
    if (ok == 1) {
        Py_BEGIN_ALLOW_THREADS
        error = program->execute(program->execute_args);
        Py_END_ALLOW_THREADS
    }
    release(&w);
    if (error != NULL) {
        accel_raise_pjrt_error(program->runtime, error);
        return -1;
    }
    return ok;
}

static PyObject *fast_call_vectorcall(FastCall *self, PyObject *const *args, size_t nargsf,
                                      PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "FastCall takes one tuple of arguments");
        return NULL;
    }
    Program *program = self->program;
    int ok = eager_and_unchanged(self);
    if (ok == 1)
        ok = attribute_is(program->client, str_alive, Py_True);
    if (ok != 1)
        return ok < 0 ? NULL : Py_NewRef(Py_NotImplemented);
    if (program->busy) /* (tested, then set, with no Python code between: no thread switch) */
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t count = PyTuple_GET_SIZE(self->signatures);
    PyObject *stack[16];
    PyObject **held = count <= 16 ? stack : PyMem_Malloc(count * sizeof(PyObject *));
    if (held == NULL)
        return PyErr_NoMemory();
    program->busy = 1;
    ok = run(self, args[0], held);
    PyObject *outputs = ok == 1 ? accel_program_outputs(program) : NULL;
    program->busy = 0;
    if (held != stack)
        PyMem_Free(held);
    if (ok != 1)
        return ok < 0 ? NULL : Py_NewRef(Py_NotImplemented);
    if (outputs == NULL || self->unflatten == Py_None) {
        PyObject *single = outputs != NULL ? Py_NewRef(PyList_GET_ITEM(outputs, 0)) : NULL;
        Py_XDECREF(outputs);
        return single;
    }
    PyObject *result = PyObject_CallOneArg(self->unflatten, outputs);
    Py_DECREF(outputs);
    return result;
}

/* ---- recording a signature's structure ---------------------------------------------------- */

/* A dict's keys sorted, as `tree_flatten` orders its children. */
static PyObject *sorted_keys(PyObject *dict)
{
    PyObject *keys = PyDict_Keys(dict);
    if (keys == NULL)
        return NULL;
    if (PyList_Sort(keys) < 0) {
        Py_DECREF(keys);
        PyErr_SetString(PyExc_ValueError, "FastCall: dict keys that do not sort");
        return NULL;
    }
    PyObject *sorted = PyList_AsTuple(keys);
    Py_DECREF(keys);
    return sorted;
}

/* `node`, which is neither a leaf this path takes nor a tuple, list, dict or None: its
 * record (type, flatten, aux data) and its children (a sequence), from `flatten_of(node)`,
 * which gives the node type's flatten function or None (a leaf of another kind). */
static int record_custom(PyObject *node, PyObject *flatten_of, PyObject **recorded,
                         PyObject **children)
{
    PyObject *flatten = PyObject_CallOneArg(flatten_of, node);
    if (flatten == NULL)
        return -1;
    if (flatten == Py_None) {
        Py_DECREF(flatten);
        PyErr_Format(PyExc_ValueError, "FastCall: an argument of type %s",
                     Py_TYPE(node)->tp_name);
        return -1;
    }
    PyObject *pair = PyObject_CallOneArg(flatten, node);
    if (pair != NULL && (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2))
        PyErr_SetString(PyExc_ValueError, "FastCall: a flatten that gave no (children, aux)");
    if (pair != NULL && !PyErr_Occurred()) {
        *children = PySequence_Fast(PyTuple_GET_ITEM(pair, 0), "pytree children");
        *recorded = PyTuple_Pack(3, (PyObject *)Py_TYPE(node), flatten,
                                 PyTuple_GET_ITEM(pair, 1));
    }
    Py_DECREF(flatten);
    Py_XDECREF(pair);
    if (*children != NULL && *recorded != NULL)
        return 0;
    Py_CLEAR(*children);
    Py_CLEAR(*recorded);
    return -1;
}

/* Append the codes of `node`'s tree to `codes` and its nodes' data to `node_data` (lists). */
static int record_structure(Program *program, PyObject *node, PyObject *codes,
                            PyObject *node_data, PyObject *flatten_of)
{
    Py_ssize_t code = node_code(node);
    PyObject *data = NULL, *children = NULL; /* dict keys or (type, flatten, aux); a sequence */
    if (code == NODE_LEAF && Py_TYPE(node) != program->array_type &&
        Py_TYPE(node) != program->host_array_type && !is_python_scalar(node)) {
        if (record_custom(node, flatten_of, &data, &children) < 0)
            return -1;
        code = NODE_CUSTOM + NODE_KINDS * PySequence_Fast_GET_SIZE(children);
    } else if (code % NODE_KINDS == NODE_DICT && (data = sorted_keys(node)) == NULL) {
        return -1;
    }
    PyObject *number = PyLong_FromSsize_t(code);
    int ok = number != NULL && PyList_Append(codes, number) == 0 &&
                     (data == NULL || PyList_Append(node_data, data) == 0)
                 ? 0
                 : -1;
    Py_XDECREF(number);
    if (ok == 0 && Py_EnterRecursiveCall(" in FastCall") == 0) {
        for (Py_ssize_t i = 0; ok == 0 && i < code / NODE_KINDS; i++) {
            PyObject *item = children != NULL ? Py_NewRef(PySequence_Fast_GET_ITEM(children, i))
                                              : child(node, i, data);
            ok = item != NULL ? record_structure(program, item, codes, node_data, flatten_of)
                              : -1;
            Py_XDECREF(item);
        }
        Py_LeaveRecursiveCall();
    } else {
        ok = -1;
    }
    Py_XDECREF(data);
    Py_XDECREF(children);
    if (ok < 0 && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "FastCall: the arguments changed while read");
    return ok;
}

/* Each leaf's place in the argument table: the leaves `kept` lists (None: all) in order. */
static int set_parameters(FastCall *self, Py_ssize_t leaves, PyObject *kept)
{
    Py_ssize_t parameters = kept == Py_None ? leaves : PyTuple_GET_SIZE(kept);
    self->parameter = PyMem_Malloc((leaves ? leaves : 1) * sizeof(Py_ssize_t));
    if (self->parameter == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < leaves; i++)
        self->parameter[i] = kept == Py_None ? i : -1;
    for (Py_ssize_t j = 0; kept != Py_None && j < parameters; j++) {
        Py_ssize_t leaf = PyLong_AsSsize_t(PyTuple_GET_ITEM(kept, j));
        if (leaf < 0 || leaf >= leaves) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "FastCall: a kept argument out of range");
            return -1;
        }
        self->parameter[leaf] = j;
    }
    if (parameters != self->program->num_arguments) {
        PyErr_SetString(PyExc_ValueError,
                        "FastCall: the kept arguments are not the program's parameters");
        return -1;
    }
    return 0;
}

/* How each Python scalar argument becomes a buffer: `scalars` has, per leaf, None or the
 * (dtype, PJRT element type) of a scalar's buffer. */
static int set_scalars(FastCall *self, PyObject *scalars)
{
    Py_ssize_t leaves = PyTuple_GET_SIZE(self->signatures);
    if (PyTuple_GET_SIZE(scalars) != leaves) {
        PyErr_SetString(PyExc_ValueError, "FastCall: a scalar entry per leaf");
        return -1;
    }
    self->scalar = PyMem_Calloc(leaves ? leaves : 1, sizeof(scalar_argument));
    if (self->scalar == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->num_scalar = leaves;
    for (Py_ssize_t i = 0; i < leaves; i++) {
        PyObject *entry = PyTuple_GET_ITEM(scalars, i);
        PyObject *kind = PyTuple_GET_ITEM(self->signatures, i);
        scalar_argument *argument = &self->scalar[i];
        PyObject *dtype;
        if (entry == Py_None)
            continue;
        if (!PyArg_ParseTuple(entry, "O!i:scalar", &PyArrayDescr_Type, &dtype, &argument->type))
            return -1;
        int type_num = ((PyArray_Descr *)dtype)->type_num;
        if (kind == (PyObject *)&PyBool_Type && type_num == NPY_BOOL)
            argument->kind = BOOL_BYTE;
        else if (kind == (PyObject *)&PyLong_Type && type_num == NPY_INT32)
            argument->kind = INT32;
        else if (kind == (PyObject *)&PyLong_Type && type_num == NPY_INT64)
            argument->kind = INT64;
        else if (kind == (PyObject *)&PyFloat_Type && type_num == NPY_FLOAT32)
            argument->kind = FLOAT32;
        else if (kind == (PyObject *)&PyFloat_Type && type_num == NPY_FLOAT64)
            argument->kind = FLOAT64;
        else
            argument->kind = BY_PYTHON;
        argument->spec.shape = PyTuple_New(0);
        argument->spec.dtype = Py_NewRef(dtype);
        argument->spec.dense = Py_NewRef(Py_True);
        if (argument->spec.shape == NULL)
            return -1;
    }
    return 0;
}

/* The structure of `example`, the arguments of a call of this signature. */
static int set_structure(FastCall *self, PyObject *example, PyObject *flatten_of)
{
    PyObject *codes = PyList_New(0);
    self->node_data = PyList_New(0);
    if (codes == NULL || self->node_data == NULL ||
        record_structure(self->program, example, codes, self->node_data, flatten_of) < 0) {
        Py_XDECREF(codes);
        return -1;
    }
    Py_ssize_t length = PyList_GET_SIZE(codes), leaves = 0;
    self->structure = PyMem_Malloc(length * sizeof(Py_ssize_t));
    if (self->structure == NULL) {
        Py_DECREF(codes);
        PyErr_NoMemory();
        return -1;
    }
    self->structure_length = length;
    for (Py_ssize_t i = 0; i < length; i++) {
        self->structure[i] = PyLong_AsSsize_t(PyList_GET_ITEM(codes, i));
        leaves += self->structure[i] == NODE_LEAF;
    }
    Py_DECREF(codes);
    if (leaves != PyTuple_GET_SIZE(self->signatures)) {
        PyErr_SetString(PyExc_ValueError, "FastCall: a signature per leaf");
        return -1;
    }
    for (Py_ssize_t i = 0; i < leaves; i++)
        self->scalars += PyType_Check(PyTuple_GET_ITEM(self->signatures, i));
    return 0;
}

static PyObject *fast_call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"program",  "signatures", "example", "unflatten",
                            "transfer", "scalars",    "guarded", "flatten_of",
                            "kept",     "guards",     NULL};
    PyObject *program, *signatures, *example, *unflatten, *transfer, *scalars, *guarded,
        *flatten_of, *kept, *config, *context, *trace_context, *eval_trace_type, *eval_module;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!O!OOO!O!OO(OOOOO):FastCall", names,
                                     &accel_program_type, &program, &PyTuple_Type,
                                     &signatures, &PyTuple_Type, &example, &unflatten,
                                     &transfer, &PyTuple_Type, &scalars, &PyList_Type,
                                     &guarded, &flatten_of, &kept, &config, &context,
                                     &trace_context, &eval_trace_type, &eval_module))
        return NULL;
    if (PyList_GET_SIZE(guarded) < 1) {
        PyErr_SetString(PyExc_ValueError, "FastCall: guarded must be a one-item list");
        return NULL;
    }
    if (kept != Py_None && !PyTuple_Check(kept)) {
        PyErr_SetString(PyExc_TypeError, "FastCall: kept must be a tuple or None");
        return NULL;
    }
    if (unflatten == Py_None && ((Program *)program)->num_outputs != 1) {
        PyErr_SetString(PyExc_ValueError, "FastCall: without unflatten, one output");
        return NULL;
    }
    FastCall *self = (FastCall *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)fast_call_vectorcall;
    self->program = (Program *)Py_NewRef(program);
    self->signatures = Py_NewRef(signatures);
    self->transfer = Py_NewRef(transfer);
    self->guarded = Py_NewRef(guarded);
    self->unflatten = Py_NewRef(unflatten);
    self->config = Py_NewRef(config);
    self->context = Py_NewRef(context);
    self->trace_context = Py_NewRef(trace_context);
    self->eval_trace_type = Py_NewRef(eval_trace_type);
    self->eval_module = Py_NewRef(eval_module);
    if (set_structure(self, example, flatten_of) < 0 ||
        set_parameters(self, PyTuple_GET_SIZE(signatures), kept) < 0 ||
        set_scalars(self, scalars) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int fast_call_traverse(FastCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->program);
    Py_VISIT(self->signatures);
    Py_VISIT(self->node_data);
    Py_VISIT(self->transfer);
    Py_VISIT(self->guarded);
    for (Py_ssize_t i = 0; i < self->num_scalar; i++)
        Py_VISIT(self->scalar[i].buffer);
    Py_VISIT(self->unflatten);
    Py_VISIT(self->config);
    Py_VISIT(self->context);
    Py_VISIT(self->trace_context);
    Py_VISIT(self->eval_trace_type);
    Py_VISIT(self->eval_module);
    return 0;
}

static int fast_call_clear(FastCall *self)
{
    Py_CLEAR(self->program);
    Py_CLEAR(self->signatures);
    Py_CLEAR(self->node_data);
    Py_CLEAR(self->transfer);
    Py_CLEAR(self->guarded);
    for (Py_ssize_t i = 0; i < self->num_scalar; i++) {
        Py_CLEAR(self->scalar[i].buffer);
        Py_CLEAR(self->scalar[i].spec.shape);
        Py_CLEAR(self->scalar[i].spec.dtype);
        Py_CLEAR(self->scalar[i].spec.dense);
    }
    Py_CLEAR(self->unflatten);
    Py_CLEAR(self->config);
    Py_CLEAR(self->context);
    Py_CLEAR(self->trace_context);
    Py_CLEAR(self->eval_trace_type);
    Py_CLEAR(self->eval_module);
    return 0;
}

static void fast_call_dealloc(FastCall *self)
{
    PyObject_GC_UnTrack(self);
    fast_call_clear(self);
    PyMem_Free(self->structure);
    PyMem_Free(self->parameter);
    PyMem_Free(self->scalar);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(fast_call_doc,
             "FastCall(program, signatures, example, unflatten, transfer, scalars, guarded,\n"
             "         flatten_of, kept, guards)\n\n"
             "The steady call of one signature of a jitted function: calling it with the\n"
             "tuple of positional arguments runs `program` and returns the result, or returns\n"
             "NotImplemented where the Python path must handle the call. `signatures` are the\n"
             "leaves' `_signature`s (a Python scalar's: its type); `example` a tuple of\n"
             "arguments of this signature (Arrays and Python scalars in pytree nodes: their\n"
             "structure is the one expected); `unflatten` makes the result of the list of\n"
             "outputs (None: the one output); `transfer(scalar)` gives a Python scalar's\n"
             "Buffer; `scalars` per leaf None or a Python scalar's (dtype, PJRT type);\n"
             "`guarded[0]` whether the transfer guard is set; `flatten_of(node)` the flatten function of a pytree node other than a\n"
             "tuple, list, dict or None (None: a leaf); `kept` the leaves the program reads\n"
             "(None: all); `guards` is (config, trace context holder, trace_context,\n"
             "EvalTrace, eval module).");

static PyTypeObject FastCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tracejit._src._accel.FastCall",
    .tp_basicsize = sizeof(FastCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(FastCall, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_doc = fast_call_doc,
    .tp_new = fast_call_new,
    .tp_dealloc = (destructor)fast_call_dealloc,
    .tp_traverse = (traverseproc)fast_call_traverse,
    .tp_clear = (inquiry)fast_call_clear,
};

/* ---- the part ----------------------------------------------------------------------------- */

static int intern(PyObject **out, const char *text)
{
    *out = PyUnicode_InternFromString(text);
    return *out == NULL ? -1 : 0;
}

int accel_add_fast_call(PyObject *module)
{
    if (intern(&str_alive, "_alive") < 0 || intern(&str_disable_jit, "disable_jit") < 0 ||
        intern(&str_trace_context, "trace_context") < 0 || intern(&str_trace, "trace") < 0 ||
        intern(&str_invalid_value_checks, "_invalid_value_checks") < 0)
        return -1;
    if (PyType_Ready(&FastCallType) < 0 || PyModule_AddType(module, &FastCallType) < 0)
        return -1;
    return 0;
}
