/* The steady call of a jitted function, in C: the per-call work that costs microseconds in
 * Python (checking the arguments' signatures, filling the argument table, calling PJRT,
 * wrapping the outputs, waiting for a result, destroying a buffer).
 *
 * Python twins: `PjitFunction.__call__`'s hot path in tracejit/_src/jit.py (the signature
 * lookup), `CompiledProgram.__call__` in dispatch.py and `Executable.execute_one` in
 * runtime/executable.py (a call), `Plugin.await_buffer_ready` and `Plugin.destroy_buffer` in
 * runtime/pjrt.py. The runtime talks to PJRT through cffi; this file calls the same function
 * pointers, whose addresses cffi gives, with argument structs Python prepared once (the
 * execute arguments of a program) or laid out by the offsets cffi reports: it needs no PJRT
 * header. Every case it does not take (a first call, keyword or static arguments, host values,
 * donation, several devices, tracing, debug checks) it declines by returning NotImplemented,
 * and Python handles the call as before; only speed changes.
 *
 * Three types:
 * - `Runtime` (one per plugin): the PJRT functions a call needs, `await_buffer` and
 *   `destroy_buffer`, and how to turn a `PJRT_Error*` into the runtime's Python exception;
 * - `Program` (one per compiled program): its prepared execute arguments and how to wrap its
 *   outputs as Arrays over Buffers, objects of tracejit's own Python classes whose slots it
 *   fills as `new_buffer` and `make_device_array` do;
 * - `FastCall` (one per signature of a jitted function): the signature, the program and the
 *   output tree; calling it runs the program on a tuple of Arrays or declines.
 *
 * Buffers passed to PJRT are held (a reference each) while the GIL is released around the
 * execution, so a thread deleting an Array meanwhile cannot destroy one; a program's argument
 * table is used by one call at a time (`busy`, read and written under the GIL), and a second
 * concurrent call declines to the Python path, which has its own tables.
 */
#include <stddef.h>
#include <string.h>

#include "accel.h"
#include <structmember.h>

typedef void *(*pjrt_function)(void *args); /* PJRT_Error *PJRT_X(PJRT_X_Args *) */

/* Every PJRT argument struct starts with its `size_t struct_size`; the plugin reads the
 * fields named by offsets cffi measured in the plugin's own header. */
#define ARGS_CAPACITY 128

typedef union {
    unsigned char bytes[ARGS_CAPACITY];
    max_align_t align;
} pjrt_args;

/* One PJRT function and the layout of its argument struct: its size and up to two pointer
 * fields (an input, an output). */
typedef struct {
    pjrt_function function;
    size_t struct_size;
    Py_ssize_t field[2];
} pjrt_call;

static void args_start(pjrt_args *args, const pjrt_call *call)
{
    memset(args->bytes, 0, call->struct_size);
    memcpy(args->bytes, &call->struct_size, sizeof(size_t));
}

static void args_set(pjrt_args *args, Py_ssize_t offset, void *pointer)
{
    memcpy(args->bytes + offset, &pointer, sizeof(void *));
}

static void *args_get(const pjrt_args *args, Py_ssize_t offset)
{
    void *pointer;
    memcpy(&pointer, args->bytes + offset, sizeof(void *));
    return pointer;
}

/* (function address, struct size, field offsets...) as Python hands it over. */
static int parse_call(PyObject *spec, int fields, pjrt_call *out)
{
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 + fields) {
        PyErr_Format(PyExc_TypeError, "expected (function, struct size, %d offsets)", fields);
        return -1;
    }
    out->function = (pjrt_function)(uintptr_t)PyLong_AsVoidPtr(PyTuple_GET_ITEM(spec, 0));
    out->struct_size = PyLong_AsSize_t(PyTuple_GET_ITEM(spec, 1));
    for (int i = 0; i < fields; i++)
        out->field[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, 2 + i));
    if (PyErr_Occurred())
        return -1;
    if (out->function == NULL || out->struct_size < sizeof(size_t) ||
        out->struct_size > ARGS_CAPACITY) {
        PyErr_SetString(PyExc_ValueError, "a PJRT function or argument struct out of range");
        return -1;
    }
    for (int i = 0; i < fields; i++)
        if (out->field[i] < (Py_ssize_t)sizeof(size_t) ||
            out->field[i] + sizeof(void *) > out->struct_size) {
            PyErr_SetString(PyExc_ValueError, "a PJRT argument field outside its struct");
            return -1;
        }
    return 0;
}

/* ---- Runtime ------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *error; /* error(address) -> the exception of a PJRT_Error*, which it destroys */
    pjrt_call destroy_buffer; /* (buffer) */
    pjrt_call ready_event;    /* (buffer, event out) */
    pjrt_call await_event;    /* (event) */
    pjrt_call destroy_event;  /* (event) */
} Runtime;

static void *call1(const pjrt_call *call, void *pointer)
{
    pjrt_args args;
    args_start(&args, call);
    args_set(&args, call->field[0], pointer);
    return call->function(args.bytes);
}

/* Without the GIL, as cffi calls it: destroying a buffer that a running program reads may
 * wait for that program, which may need the GIL (a host callback). */
static void *destroy_buffer(Runtime *runtime, void *buffer)
{
    void *error;
    Py_BEGIN_ALLOW_THREADS
    error = call1(&runtime->destroy_buffer, buffer);
    Py_END_ALLOW_THREADS
    return error;
}

/* ReadyEvent, Await (without the GIL: the work may need it, and other threads may run),
 * Destroy: returns the PJRT_Error* of the first that failed, or NULL. */
static void *await_buffer(Runtime *runtime, void *buffer)
{
    pjrt_args args;
    args_start(&args, &runtime->ready_event);
    args_set(&args, runtime->ready_event.field[0], buffer);
    void *error = runtime->ready_event.function(args.bytes);
    if (error != NULL)
        return error;
    void *event = args_get(&args, runtime->ready_event.field[1]);
    Py_BEGIN_ALLOW_THREADS
    error = call1(&runtime->await_event, event);
    Py_END_ALLOW_THREADS
    void *destroy_error = call1(&runtime->destroy_event, event);
    return error != NULL ? error : destroy_error;
}

/* Raise the runtime's exception for `error` (which the runtime's `error` destroys). */
static PyObject *raise_pjrt_error(Runtime *runtime, void *error)
{
    PyObject *address = PyLong_FromVoidPtr(error);
    if (address == NULL)
        return NULL;
    PyObject *exception = PyObject_CallOneArg(runtime->error, address);
    Py_DECREF(address);
    if (exception == NULL)
        return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exception), exception);
    Py_DECREF(exception);
    return NULL;
}

static int address_argument(PyObject *const *args, Py_ssize_t nargs, void **out)
{
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "expected one buffer address");
        return -1;
    }
    *out = PyLong_AsVoidPtr(args[0]);
    return *out == NULL && PyErr_Occurred() ? -1 : 0;
}

static PyObject *error_result(void *error)
{
    return PyLong_FromVoidPtr(error); /* 0: no error */
}

PyDoc_STRVAR(runtime_await_doc,
             "await_buffer(address) -> 0 or the address of a PJRT_Error\n\n"
             "Wait until the buffer is computed (ReadyEvent, Await, Destroy); the GIL is\n"
             "released while waiting.");

static PyObject *runtime_await(Runtime *self, PyObject *const *args, Py_ssize_t nargs)
{
    void *buffer;
    if (address_argument(args, nargs, &buffer) < 0)
        return NULL;
    return error_result(await_buffer(self, buffer));
}

PyDoc_STRVAR(runtime_destroy_doc,
             "destroy_buffer(address) -> 0 or the address of a PJRT_Error\n\n"
             "PJRT_Buffer_Destroy: the caller owned the buffer and must not use it again.");

static PyObject *runtime_destroy(Runtime *self, PyObject *const *args, Py_ssize_t nargs)
{
    void *buffer;
    if (address_argument(args, nargs, &buffer) < 0)
        return NULL;
    return error_result(destroy_buffer(self, buffer));
}

static PyObject *runtime_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"error",       "destroy_buffer", "ready_event",
                            "await_event", "destroy_event",  NULL};
    PyObject *error, *specs[4];
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOO:Runtime", names, &error, &specs[0],
                                     &specs[1], &specs[2], &specs[3]))
        return NULL;
    if (!PyCallable_Check(error)) {
        PyErr_SetString(PyExc_TypeError, "Runtime: error must be callable");
        return NULL;
    }
    Runtime *self = (Runtime *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->error = Py_NewRef(error);
    if (parse_call(specs[0], 1, &self->destroy_buffer) < 0 ||
        parse_call(specs[1], 2, &self->ready_event) < 0 ||
        parse_call(specs[2], 1, &self->await_event) < 0 ||
        parse_call(specs[3], 1, &self->destroy_event) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int runtime_traverse(Runtime *self, visitproc visit, void *arg)
{
    Py_VISIT(self->error);
    return 0;
}

static int runtime_clear(Runtime *self)
{
    Py_CLEAR(self->error);
    return 0;
}

static void runtime_dealloc(Runtime *self)
{
    PyObject_GC_UnTrack(self);
    runtime_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef runtime_methods[] = {
    {"await_buffer", (PyCFunction)(void (*)(void))runtime_await, METH_FASTCALL,
     runtime_await_doc},
    {"destroy_buffer", (PyCFunction)(void (*)(void))runtime_destroy, METH_FASTCALL,
     runtime_destroy_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(runtime_doc,
             "Runtime(error, destroy_buffer, ready_event, await_event, destroy_event)\n\n"
             "The PJRT functions of a call: each given as (function address, struct size,\n"
             "field offsets); `error(address)` returns the exception of a PJRT_Error*.");

static PyTypeObject RuntimeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tracejit._src._accel.Runtime",
    .tp_basicsize = sizeof(Runtime),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = runtime_doc,
    .tp_new = runtime_new,
    .tp_dealloc = (destructor)runtime_dealloc,
    .tp_traverse = (traverseproc)runtime_traverse,
    .tp_clear = (inquiry)runtime_clear,
    .tp_methods = runtime_methods,
};

/* ---- the slots of tracejit's Python classes ----------------------------------------------- */

/* Where `name`, a `__slots__` entry of `type`, lives in its objects. */
static int slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *out)
{
    PyObject *descriptor = PyObject_GetAttrString((PyObject *)type, name);
    if (descriptor == NULL)
        return -1;
    int ok = Py_IS_TYPE(descriptor, &PyMemberDescr_Type) &&
             ((PyMemberDescrObject *)descriptor)->d_member->type == T_OBJECT_EX;
    if (ok)
        *out = ((PyMemberDescrObject *)descriptor)->d_member->offset;
    Py_DECREF(descriptor);
    if (!ok)
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, name);
    return ok ? 0 : -1;
}

static inline PyObject *slot_get(PyObject *object, Py_ssize_t offset) /* borrowed or NULL */
{
    return *(PyObject **)((char *)object + offset);
}

/* Set an empty slot of a new object (stealing `value`). */
static inline void slot_init(PyObject *object, Py_ssize_t offset, PyObject *value)
{
    *(PyObject **)((char *)object + offset) = value;
}

enum buffer_slot {
    BUFFER_ADDRESS,
    BUFFER_CLIENT,
    BUFFER_DELETED,
    BUFFER_DEVICE,
    BUFFER_DTYPE,
    BUFFER_HOST,
    BUFFER_LAYOUT_DENSE,
    BUFFER_READY,
    BUFFER_SHAPE,
    BUFFER_VIEWS,
    BUFFER_SLOTS
};
static const char *buffer_slot_names[BUFFER_SLOTS] = {
    "_address", "_client", "_deleted",      "_device", "_dtype",
    "_host",    "_layout_dense", "_ready", "_shape",  "_views"};

enum array_slot { ARRAY_BUFFER, ARRAY_SIGNATURE, ARRAY_WEAK_TYPE, ARRAY_SLOTS };
static const char *array_slot_names[ARRAY_SLOTS] = {"_buffer", "_signature", "weak_type"};

/* ---- Program ------------------------------------------------------------------------------ */

typedef struct {
    PyObject *shape, *dtype, *dense, *weak_type, *signature;
} output_spec;

typedef struct {
    PyObject_HEAD
    Runtime *runtime;
    pjrt_function execute;
    void *execute_args;   /* PJRT_LoadedExecutable_Execute_Args, prepared by Python */
    void **arguments;     /* its argument table of device 0 */
    void **outputs;       /* its output table of device 0 */
    Py_ssize_t num_arguments;
    Py_ssize_t num_outputs;
    PyObject *keep;       /* the Python objects owning those structs */
    PyObject *client, *device;
    PyTypeObject *buffer_type, *array_type, *host_array_type;
    Py_ssize_t buffer_slot[BUFFER_SLOTS];
    Py_ssize_t array_slot[ARRAY_SLOTS];
    output_spec *output;
    int busy; /* a call is using the tables (read and written under the GIL) */
} Program;

static PyObject *str_alive, *str_disable_jit, *str_trace_context, *str_trace,
    *str_invalid_value_checks;

static void destroy_outputs(Program *self, Py_ssize_t from)
{
    for (Py_ssize_t i = from; i < self->num_outputs; i++) {
        void *error = destroy_buffer(self->runtime, self->outputs[i]);
        if (error != NULL) { /* an output nobody saw: its destroy error has no owner */
            PyObject *type, *value, *traceback;
            PyErr_Fetch(&type, &value, &traceback);
            raise_pjrt_error(self->runtime, error);
            PyErr_Clear();
            PyErr_Restore(type, value, traceback);
        }
    }
}

/* An output Buffer owning `pointer`, as `new_buffer` makes it but for `_ptr`, the cffi
 * pointer, which Python makes from `_address` when it first needs it. */
static PyObject *new_output_buffer(Program *self, void *pointer, const output_spec *spec)
{
    PyObject *address = PyLong_FromVoidPtr(pointer);
    if (address == NULL)
        return NULL;
    PyObject *buffer = self->buffer_type->tp_alloc(self->buffer_type, 0);
    if (buffer == NULL) {
        Py_DECREF(address);
        return NULL;
    }
    const Py_ssize_t *slot = self->buffer_slot;
    slot_init(buffer, slot[BUFFER_ADDRESS], address);
    slot_init(buffer, slot[BUFFER_CLIENT], Py_NewRef(self->client));
    slot_init(buffer, slot[BUFFER_SHAPE], Py_NewRef(spec->shape));
    slot_init(buffer, slot[BUFFER_DTYPE], Py_NewRef(spec->dtype));
    slot_init(buffer, slot[BUFFER_DEVICE], Py_NewRef(self->device));
    slot_init(buffer, slot[BUFFER_READY], Py_NewRef(Py_False));
    slot_init(buffer, slot[BUFFER_HOST], Py_NewRef(Py_None));
    slot_init(buffer, slot[BUFFER_VIEWS], PyLong_FromLong(0));
    slot_init(buffer, slot[BUFFER_DELETED], Py_NewRef(Py_False));
    slot_init(buffer, slot[BUFFER_LAYOUT_DENSE], Py_NewRef(spec->dense));
    return buffer;
}

/* The Array over an output Buffer (stolen), as `make_device_array` makes it, with the
 * signature `jit` would compute for it. */
static PyObject *new_output_array(Program *self, PyObject *buffer, const output_spec *spec)
{
    PyObject *array = self->array_type->tp_alloc(self->array_type, 0);
    if (array == NULL) {
        Py_DECREF(buffer);
        return NULL;
    }
    slot_init(array, self->array_slot[ARRAY_BUFFER], buffer);
    slot_init(array, self->array_slot[ARRAY_WEAK_TYPE], Py_NewRef(spec->weak_type));
    slot_init(array, self->array_slot[ARRAY_SIGNATURE], Py_NewRef(spec->signature));
    return array;
}

/* The outputs the last execution left in the output table, as a list of Arrays. On failure
 * every output is still owned by someone: a Buffer made, or destroyed here. */
static PyObject *wrap_outputs(Program *self)
{
    PyObject *list = PyList_New(self->num_outputs);
    if (list == NULL) {
        destroy_outputs(self, 0);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < self->num_outputs; i++) {
        const output_spec *spec = &self->output[i];
        PyObject *buffer = new_output_buffer(self, self->outputs[i], spec);
        PyObject *array = buffer != NULL ? new_output_array(self, buffer, spec) : NULL;
        if (array == NULL) {
            if (buffer == NULL)
                destroy_outputs(self, i);
            else
                destroy_outputs(self, i + 1);
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, array);
    }
    return list;
}

static int parse_outputs(Program *self, PyObject *outputs)
{
    if (!PyTuple_Check(outputs)) {
        PyErr_SetString(PyExc_TypeError, "Program: outputs must be a tuple");
        return -1;
    }
    self->num_outputs = PyTuple_GET_SIZE(outputs);
    self->output = PyMem_Calloc(self->num_outputs ? self->num_outputs : 1, sizeof(output_spec));
    if (self->output == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < self->num_outputs; i++) {
        output_spec *spec = &self->output[i];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(outputs, i), "O!OOOO!:output", &PyTuple_Type,
                              &spec->shape, &spec->dtype, &spec->dense, &spec->weak_type,
                              &PyTuple_Type, &spec->signature))
            return -1;
        Py_INCREF(spec->shape);
        Py_INCREF(spec->dtype);
        Py_INCREF(spec->dense);
        Py_INCREF(spec->weak_type);
        Py_INCREF(spec->signature);
    }
    return 0;
}

static int find_slots(Program *self)
{
    for (int i = 0; i < BUFFER_SLOTS; i++)
        if (slot_offset(self->buffer_type, buffer_slot_names[i], &self->buffer_slot[i]) < 0)
            return -1;
    for (int i = 0; i < ARRAY_SLOTS; i++) {
        Py_ssize_t offset;
        if (slot_offset(self->array_type, array_slot_names[i], &self->array_slot[i]) < 0 ||
            slot_offset(self->host_array_type, array_slot_names[i], &offset) < 0)
            return -1;
        if (offset != self->array_slot[i]) {
            PyErr_SetString(PyExc_TypeError, "Program: the array types' slots differ");
            return -1;
        }
    }
    return 0;
}

static PyObject *program_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"runtime", "execute",     "execute_args", "arguments",
                            "outputs", "num_arguments", "keep",       "client",
                            "device",  "buffer_type",   "array_type", "host_array_type",
                            "output_specs", NULL};
    PyObject *runtime, *execute, *execute_args, *arguments, *outputs, *keep, *client, *device;
    PyObject *specs;
    PyTypeObject *buffer_type, *array_type, *host_array_type;
    Py_ssize_t num_arguments;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOOOnOOOO!O!O!O!:Program", names,
                                     &RuntimeType, &runtime, &execute, &execute_args,
                                     &arguments, &outputs, &num_arguments, &keep, &client,
                                     &device, &PyType_Type, &buffer_type, &PyType_Type,
                                     &array_type, &PyType_Type, &host_array_type,
                                     &PyTuple_Type, &specs))
        return NULL;
    Program *self = (Program *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->runtime = (Runtime *)Py_NewRef(runtime);
    self->keep = Py_NewRef(keep);
    self->client = Py_NewRef(client);
    self->device = Py_NewRef(device);
    self->buffer_type = (PyTypeObject *)Py_NewRef(buffer_type);
    self->array_type = (PyTypeObject *)Py_NewRef(array_type);
    self->host_array_type = (PyTypeObject *)Py_NewRef(host_array_type);
    self->execute = (pjrt_function)(uintptr_t)PyLong_AsVoidPtr(execute);
    self->execute_args = PyLong_AsVoidPtr(execute_args);
    self->arguments = PyLong_AsVoidPtr(arguments);
    self->outputs = PyLong_AsVoidPtr(outputs);
    self->num_arguments = num_arguments;
    if (PyErr_Occurred() || parse_outputs(self, specs) < 0 || find_slots(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (self->execute == NULL || self->execute_args == NULL || self->arguments == NULL ||
        self->outputs == NULL || num_arguments < 0) {
        PyErr_SetString(PyExc_ValueError, "Program: a null execute argument");
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int program_traverse(Program *self, visitproc visit, void *arg)
{
    Py_VISIT(self->runtime);
    Py_VISIT(self->keep);
    Py_VISIT(self->client);
    Py_VISIT(self->device);
    Py_VISIT(self->buffer_type);
    Py_VISIT(self->array_type);
    Py_VISIT(self->host_array_type);
    for (Py_ssize_t i = 0; self->output != NULL && i < self->num_outputs; i++) {
        Py_VISIT(self->output[i].shape);
        Py_VISIT(self->output[i].dtype);
        Py_VISIT(self->output[i].dense);
        Py_VISIT(self->output[i].weak_type);
        Py_VISIT(self->output[i].signature);
    }
    return 0;
}

static int program_clear(Program *self)
{
    Py_CLEAR(self->runtime);
    Py_CLEAR(self->keep);
    Py_CLEAR(self->client);
    Py_CLEAR(self->device);
    Py_CLEAR(self->buffer_type);
    Py_CLEAR(self->array_type);
    Py_CLEAR(self->host_array_type);
    for (Py_ssize_t i = 0; self->output != NULL && i < self->num_outputs; i++) {
        Py_CLEAR(self->output[i].shape);
        Py_CLEAR(self->output[i].dtype);
        Py_CLEAR(self->output[i].dense);
        Py_CLEAR(self->output[i].weak_type);
        Py_CLEAR(self->output[i].signature);
    }
    return 0;
}

static void program_dealloc(Program *self)
{
    PyObject_GC_UnTrack(self);
    program_clear(self);
    PyMem_Free(self->output);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(program_doc,
             "Program(runtime, execute, execute_args, arguments, outputs, num_arguments, keep,\n"
             "        client, device, buffer_type, array_type, host_array_type, output_specs)\n\n"
             "A single-device program's prepared call: the execute function's address, its\n"
             "argument struct and the struct's argument and output tables of device 0 (kept\n"
             "alive by `keep`), and per output (shape, dtype, dense, weak_type, signature).");

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tracejit._src._accel.Program",
    .tp_basicsize = sizeof(Program),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = program_doc,
    .tp_new = program_new,
    .tp_dealloc = (destructor)program_dealloc,
    .tp_traverse = (traverseproc)program_traverse,
    .tp_clear = (inquiry)program_clear,
};

/* ---- FastCall ----------------------------------------------------------------------------- */

/* The arguments' pytree structure, one code per node in depth-first order: a leaf (an Array),
 * None, or a tuple, list or dict (exact types: namedtuples, OrderedDicts and other nodes are
 * Python's) and its length; a dict's children in the order of its sorted keys, which are kept
 * beside. Python's `tree_flatten` visits these nodes in the same order. */
enum { NODE_LEAF, NODE_NONE, NODE_TUPLE, NODE_LIST, NODE_DICT, NODE_KINDS };

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

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Program *program;
    PyObject *signatures;   /* a tuple: each leaf's `_signature` */
    Py_ssize_t *structure;  /* node codes, depth-first */
    Py_ssize_t structure_length;
    PyObject *dict_keys;    /* a list: each dict node's sorted keys (a tuple), depth-first */
    PyObject *unflatten;    /* outputs list -> result; None: the one output itself */
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

/* A walk over the arguments along the expected structure. */
typedef struct {
    FastCall *call;
    Py_ssize_t position; /* in `structure` */
    Py_ssize_t dicts;    /* in `dict_keys` */
    Py_ssize_t leaves;   /* taken: their buffers are in the table and held */
    PyObject **held;
} walk;

/* Leaf `x`: its buffer's handle into the argument table, the buffer held. 1 taken, 0 not a
 * leaf this path takes (not a device Array of the signature), -1 an error. (A buffer deleted
 * behind its Array's back goes to PJRT, which reports it, as from the Python path.) */
static int take_leaf(walk *w, PyObject *x)
{
    Program *program = w->call->program;
    if (Py_TYPE(x) != program->array_type && Py_TYPE(x) != program->host_array_type)
        return 0;
    const Py_ssize_t *array_slot = program->array_slot;
    PyObject *own = slot_get(x, array_slot[ARRAY_SIGNATURE]);
    PyObject *expected = PyTuple_GET_ITEM(w->call->signatures, w->leaves);
    if (own == NULL)
        return 0;
    if (own != expected) {
        int equal = PyObject_RichCompareBool(own, expected, Py_EQ);
        if (equal != 1)
            return equal;
    }
    PyObject *buffer = slot_get(x, array_slot[ARRAY_BUFFER]);
    if (buffer == NULL || Py_TYPE(buffer) != program->buffer_type)
        return 0;
    PyObject *address = slot_get(buffer, program->buffer_slot[BUFFER_ADDRESS]);
    void *pointer = address != NULL ? PyLong_AsVoidPtr(address) : NULL;
    if (pointer == NULL)
        return PyErr_Occurred() ? -1 : 0;
    program->arguments[w->leaves] = pointer;
    w->held[w->leaves++] = Py_NewRef(buffer);
    return 1;
}

static int take_node(walk *w, PyObject *node)
{
    FastCall *call = w->call;
    if (w->position >= call->structure_length)
        return 0;
    Py_ssize_t code = call->structure[w->position++];
    if (code == NODE_LEAF)
        return w->leaves < PyTuple_GET_SIZE(call->signatures) ? take_leaf(w, node) : 0;
    if (node_code(node) != code)
        return 0;
    PyObject *keys = code % NODE_KINDS == NODE_DICT
                         ? PyList_GET_ITEM(call->dict_keys, w->dicts++)
                         : NULL;
    for (Py_ssize_t i = 0; i < code / NODE_KINDS; i++) {
        PyObject *item = child(node, i, keys);
        if (item == NULL)
            return PyErr_Occurred() ? -1 : 0;
        int ok = take_node(w, item);
        Py_DECREF(item);
        if (ok != 1)
            return ok;
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
    void *error = NULL;
    if (ok == 1) {
        Py_BEGIN_ALLOW_THREADS
        error = program->execute(program->execute_args);
        Py_END_ALLOW_THREADS
    }
    release(&w);
    if (error != NULL) {
        raise_pjrt_error(program->runtime, error);
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
    Py_ssize_t count = program->num_arguments;
    PyObject *stack[16];
    PyObject **held = count <= 16 ? stack : PyMem_Malloc(count * sizeof(PyObject *));
    if (held == NULL)
        return PyErr_NoMemory();
    program->busy = 1;
    ok = run(self, args[0], held);
    PyObject *outputs = ok == 1 ? wrap_outputs(program) : NULL;
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

/* Append the codes of `node`'s tree to `codes` and its dicts' keys to `dict_keys` (lists);
 * its leaves must be Arrays. */
static int record_structure(Program *program, PyObject *node, PyObject *codes,
                            PyObject *dict_keys)
{
    Py_ssize_t code = node_code(node);
    if (code == NODE_LEAF && Py_TYPE(node) != program->array_type &&
        Py_TYPE(node) != program->host_array_type) {
        PyErr_Format(PyExc_ValueError, "FastCall: an argument of type %s",
                     Py_TYPE(node)->tp_name);
        return -1;
    }
    PyObject *number = PyLong_FromSsize_t(code);
    if (number == NULL || PyList_Append(codes, number) < 0) {
        Py_XDECREF(number);
        return -1;
    }
    Py_DECREF(number);
    PyObject *keys = NULL;
    if (code % NODE_KINDS == NODE_DICT) {
        keys = sorted_keys(node);
        if (keys == NULL || PyList_Append(dict_keys, keys) < 0) {
            Py_XDECREF(keys);
            return -1;
        }
    }
    if (Py_EnterRecursiveCall(" in FastCall")) {
        Py_XDECREF(keys);
        return -1;
    }
    int ok = 0;
    for (Py_ssize_t i = 0; ok == 0 && i < code / NODE_KINDS; i++) {
        PyObject *item = child(node, i, keys);
        ok = item != NULL ? record_structure(program, item, codes, dict_keys) : -1;
        Py_XDECREF(item);
    }
    Py_LeaveRecursiveCall();
    Py_XDECREF(keys);
    if (ok < 0 && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "FastCall: the arguments changed while read");
    return ok;
}

/* The structure of `example`, the arguments of a call of this signature. */
static int set_structure(FastCall *self, PyObject *example)
{
    PyObject *codes = PyList_New(0);
    self->dict_keys = PyList_New(0);
    if (codes == NULL || self->dict_keys == NULL ||
        record_structure(self->program, example, codes, self->dict_keys) < 0) {
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
    if (leaves != PyTuple_GET_SIZE(self->signatures) ||
        leaves != self->program->num_arguments) {
        PyErr_SetString(PyExc_ValueError,
                        "FastCall: the arguments' leaves are not the program's parameters");
        return -1;
    }
    return 0;
}

static PyObject *fast_call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"program", "signatures", "example", "unflatten", "guards", NULL};
    PyObject *program, *signatures, *example, *unflatten, *config, *context, *trace_context,
        *eval_trace_type, *eval_module;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!O!O(OOOOO):FastCall", names,
                                     &ProgramType, &program, &PyTuple_Type, &signatures,
                                     &PyTuple_Type, &example, &unflatten, &config, &context,
                                     &trace_context, &eval_trace_type, &eval_module))
        return NULL;
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
    self->unflatten = Py_NewRef(unflatten);
    self->config = Py_NewRef(config);
    self->context = Py_NewRef(context);
    self->trace_context = Py_NewRef(trace_context);
    self->eval_trace_type = Py_NewRef(eval_trace_type);
    self->eval_module = Py_NewRef(eval_module);
    if (set_structure(self, example) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int fast_call_traverse(FastCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->program);
    Py_VISIT(self->signatures);
    Py_VISIT(self->dict_keys);
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
    Py_CLEAR(self->dict_keys);
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
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(fast_call_doc,
             "FastCall(program, signatures, example, unflatten, guards)\n\n"
             "The steady call of one signature of a jitted function: calling it with the\n"
             "tuple of positional arguments runs `program` and returns the result, or returns\n"
             "NotImplemented where the Python path must handle the call. `signatures` are the\n"
             "leaves' `_signature`s; `example` a tuple of arguments of this signature (Arrays\n"
             "in tuples, lists, dicts and Nones: their structure is the one expected);\n"
             "`unflatten` makes the result of the list of outputs (None: the one output);\n"
             "`guards` is (config, trace context holder, trace_context, EvalTrace, eval module).");

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

int accel_add_dispatch(PyObject *module)
{
    if (intern(&str_alive, "_alive") < 0 || intern(&str_disable_jit, "disable_jit") < 0 ||
        intern(&str_trace_context, "trace_context") < 0 || intern(&str_trace, "trace") < 0 ||
        intern(&str_invalid_value_checks, "_invalid_value_checks") < 0)
        return -1;
    PyTypeObject *types[] = {&RuntimeType, &ProgramType, &FastCallType};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (PyType_Ready(types[i]) < 0 || PyModule_AddType(module, types[i]) < 0)
            return -1;
    return 0;
}
