/* The steady call of a jitted function, in C: the per-call work that costs microseconds in
 * Python (filling the argument table, calling PJRT, wrapping the outputs, waiting for a
 * result, destroying a buffer). This file holds the program's side; fast_call.c the
 * arguments' (their structure and signatures).
 *
 * Python twins: `CompiledProgram.__call__` in dispatch.py and `Executable.execute_one` in
 * runtime/executable.py (a call), `Plugin.await_buffer_ready` and `Plugin.destroy_buffer` in
 * runtime/pjrt.py. The runtime talks to PJRT through cffi; this file calls the same function
 * pointers, whose addresses cffi gives, with argument structs Python prepared once (the
 * execute arguments of a program) or laid out by the offsets cffi reports: it needs no PJRT
 * header.
 *
 * Two types:
 * - `Runtime` (one per plugin): the PJRT functions a call needs, `await_buffer` and
 *   `destroy_buffer`, and how to turn a `PJRT_Error*` into the runtime's Python exception;
 * - `Program` (one per compiled program): its prepared execute arguments and how to wrap its
 *   outputs as Arrays over Buffers, objects of tracejit's own Python classes whose slots it
 *   fills as `new_buffer` and `make_device_array` do.
 */
#include <stddef.h>
#include <string.h>

#include "dispatch.h"
#include <structmember.h>

/* Every PJRT argument struct starts with its `size_t struct_size`; the plugin reads the
 * fields named by offsets cffi measured in the plugin's own header. */
#define ARGS_CAPACITY 128

typedef union {
    unsigned char bytes[ARGS_CAPACITY];
    max_align_t align;
} pjrt_args;

/* One PJRT function and the layout of its argument struct: its size and the offsets of the
 * fields a call sets or reads. */
#define CALL_FIELDS 7

typedef struct {
    pjrt_function function;
    size_t struct_size;
    Py_ssize_t field[CALL_FIELDS];
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

static void args_set_int(pjrt_args *args, Py_ssize_t offset, int value) /* (an enum) */
{
    memcpy(args->bytes + offset, &value, sizeof(int));
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
    if (fields > CALL_FIELDS || !PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 + fields) {
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

struct Runtime {
    PyObject_HEAD
    PyObject *error; /* error(address) -> the exception of a PJRT_Error*, which it destroys */
    pjrt_call destroy_buffer; /* (buffer) */
    pjrt_call ready_event;    /* (buffer, event out) */
    pjrt_call await_event;    /* (event) */
    pjrt_call destroy_event;  /* (event) */
    /* (client, data, type, host_buffer_semantics, device, done_with_host_buffer, buffer) */
    pjrt_call from_host;
    int copy_during_call; /* PJRT_HostBufferSemantics_kImmutableOnlyDuringCall */
};

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
PyObject *accel_raise_pjrt_error(Runtime *runtime, void *error)
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

void *accel_buffer_from_scalar(Program *program, int type, const void *data, void **buffer)
{
    Runtime *runtime = program->runtime;
    const pjrt_call *call = &runtime->from_host;
    pjrt_args args;
    args_start(&args, call);
    args_set(&args, call->field[0], program->client_address);
    args_set(&args, call->field[1], (void *)data);
    args_set_int(&args, call->field[2], type);
    args_set_int(&args, call->field[3], runtime->copy_during_call);
    args_set(&args, call->field[4], program->device_address);
    void *error = call->function(args.bytes);
    if (error != NULL)
        return error;
    void *event = args_get(&args, call->field[5]);
    *buffer = args_get(&args, call->field[6]);
    error = event != NULL ? call1(&runtime->destroy_event, event) : NULL;
    if (error != NULL)
        call1(&runtime->destroy_buffer, *buffer); /* (its own error would hide the first) */
    return error;
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
    static char *names[] = {"error",         "destroy_buffer", "ready_event", "await_event",
                            "destroy_event", "from_host",      "copy_during_call", NULL};
    PyObject *error, *specs[5];
    int copy_during_call;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOi:Runtime", names, &error, &specs[0],
                                     &specs[1], &specs[2], &specs[3], &specs[4],
                                     &copy_during_call))
        return NULL;
    if (!PyCallable_Check(error)) {
        PyErr_SetString(PyExc_TypeError, "Runtime: error must be callable");
        return NULL;
    }
    Runtime *self = (Runtime *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->error = Py_NewRef(error);
    self->copy_during_call = copy_during_call;
    if (parse_call(specs[0], 1, &self->destroy_buffer) < 0 ||
        parse_call(specs[1], 2, &self->ready_event) < 0 ||
        parse_call(specs[2], 1, &self->await_event) < 0 ||
        parse_call(specs[3], 1, &self->destroy_event) < 0 ||
        parse_call(specs[4], 7, &self->from_host) < 0) {
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
             "Runtime(error, destroy_buffer, ready_event, await_event, destroy_event,\n"
             "        from_host, copy_during_call)\n\n"
             "The PJRT functions of a call: each given as (function address, struct size,\n"
             "field offsets); `error(address)` returns the exception of a PJRT_Error*;\n"
             "`copy_during_call` the host buffer semantics kImmutableOnlyDuringCall.");

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


/* Set an empty slot of a new object (stealing `value`). */
static inline void slot_init(PyObject *object, Py_ssize_t offset, PyObject *value)
{
    *(PyObject **)((char *)object + offset) = value;
}

static const char *buffer_slot_names[BUFFER_SLOTS] = {
    "_address", "_client", "_deleted",      "_device", "_dtype",
    "_host",    "_layout_dense", "_ready", "_shape",  "_views"};

static const char *array_slot_names[ARRAY_SLOTS] = {"_buffer", "_signature", "weak_type"};

/* ---- Program ------------------------------------------------------------------------------ */



static void destroy_outputs(Program *self, Py_ssize_t from)
{
    for (Py_ssize_t i = from; i < self->num_outputs; i++) {
        void *error = destroy_buffer(self->runtime, self->outputs[i]);
        if (error != NULL) { /* an output nobody saw: its destroy error has no owner */
            PyObject *type, *value, *traceback;
            PyErr_Fetch(&type, &value, &traceback);
            accel_raise_pjrt_error(self->runtime, error);
            PyErr_Clear();
            PyErr_Restore(type, value, traceback);
        }
    }
}

PyObject *accel_program_buffer(Program *self, void *pointer, const output_spec *spec)
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
PyObject *accel_program_outputs(Program *self)
{
    PyObject *list = PyList_New(self->num_outputs);
    if (list == NULL) {
        destroy_outputs(self, 0);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < self->num_outputs; i++) {
        const output_spec *spec = &self->output[i];
        PyObject *buffer = accel_program_buffer(self, self->outputs[i], spec);
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
    static char *names[] = {"runtime",        "execute",        "execute_args", "arguments",
                            "outputs",        "num_arguments",  "keep",         "client",
                            "device",         "client_address", "device_address",
                            "buffer_type",    "array_type",     "host_array_type",
                            "output_specs",   NULL};
    PyObject *runtime, *execute, *execute_args, *arguments, *outputs, *keep, *client, *device;
    PyObject *client_address, *device_address;
    PyObject *specs;
    PyTypeObject *buffer_type, *array_type, *host_array_type;
    Py_ssize_t num_arguments;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOOOnOOOOOO!O!O!O!:Program", names,
                                     &RuntimeType, &runtime, &execute, &execute_args,
                                     &arguments, &outputs, &num_arguments, &keep, &client,
                                     &device, &client_address, &device_address,
                                     &PyType_Type, &buffer_type, &PyType_Type,
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
    self->client_address = PyLong_AsVoidPtr(client_address);
    self->device_address = PyLong_AsVoidPtr(device_address);
    self->num_arguments = num_arguments;
    if (PyErr_Occurred() || parse_outputs(self, specs) < 0 || find_slots(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (self->execute == NULL || self->execute_args == NULL || self->arguments == NULL ||
        self->outputs == NULL || self->client_address == NULL ||
        self->device_address == NULL || num_arguments < 0) {
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
             "        client, device, client_address, device_address, buffer_type,\n"
             "        array_type, host_array_type, output_specs)\n\n"
             "A single-device program's prepared call: the execute function's address, its\n"
             "argument struct and the struct's argument and output tables of device 0 (kept\n"
             "alive by `keep`), the PJRT client and device it runs on, and per output (shape,\n"
             "dtype, dense, weak_type, signature).");

PyTypeObject accel_program_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tracejit._src._accel.Program",
    .tp_basicsize = sizeof(Program),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = program_doc,
    .tp_new = program_new,
    .tp_dealloc = (destructor)program_dealloc,
    .tp_traverse = (traverseproc)program_traverse,
    .tp_clear = (inquiry)program_clear,
};

/* ---- the part ----------------------------------------------------------------------------- */

int accel_add_dispatch(PyObject *module)
{
    PyTypeObject *types[] = {&RuntimeType, &accel_program_type};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (PyType_Ready(types[i]) < 0 || PyModule_AddType(module, types[i]) < 0)
            return -1;
    return 0;
}
