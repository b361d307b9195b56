/* The XLA FFI handler of tracejit's host callbacks, in C: XLA calls it in the middle of a
 * compiled program to run a Python function (pure_callback, io_callback, LAPACK called back,
 * the collectives across processes).
 *
 * Its Python twin is the cffi callback `_handle` in tracejit/_src/runtime/ffi.py, whose every
 * read of a call frame is a cffi attribute access: a few microseconds per call. Here the frame
 * is read in C: the callback's id from the attributes, NumPy views of the operand buffers
 * (read-only) and of the result buffers (writable); then one Python call,
 * `run(callback_id, operands, results)` (ffi.py's `_run_for_accel`), does the rest (finding
 * the function, calling it, checking and writing its results) and returns None or
 * (message, error code). The metadata query and the first call of the process (which records
 * the plugin's struct sizes) go to the Python handler, `handle_at(frame address)`. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "accel.h"
#include "xla_ffi.h"

enum {
    XLA_FFI_EXTENSION_METADATA = 1,
    XLA_FFI_STAGE_EXECUTE = 3,
    XLA_FFI_ATTR_SCALAR = 3,
    XLA_FFI_DATA_S64 = 5,
    XLA_FFI_DATA_TOKEN = 17,
    XLA_FFI_ERROR_INVALID_ARGUMENT = 3,
    XLA_FFI_ERROR_INTERNAL = 13,
};

static const char callback_id_name[] = "callback_id";

/* Set once by `host_callback_handler` (with the GIL held), read by the handler with the GIL
 * held: the two Python halves, and the NumPy dtype of each XLA FFI data type (a tuple indexed
 * by its code, None where unsupported). */
static PyObject *run_in_python;
static PyObject *handle_in_python;
static PyObject *dtype_of_code;
static int first_call_done;

static XLA_FFI_Error *new_error(XLA_FFI_CallFrame *frame, const char *message, int code)
{
    XLA_FFI_Error_Create_Args args;
    memset(&args, 0, sizeof args);
    args.struct_size = offsetof(XLA_FFI_Error_Create_Args, errc) + sizeof(int);
    args.message = message;
    args.errc = code;
    return frame->api->XLA_FFI_Error_Create(&args);
}

/* The callback's id (attribute `callback_id`, an int64 scalar); -1 if absent. */
static int64_t callback_id_of(const XLA_FFI_Attrs *attrs)
{
    for (int64_t i = 0; i < attrs->size; i++) {
        const XLA_FFI_ByteSpan *name = attrs->names[i];
        if (name->len != sizeof callback_id_name - 1 ||
            memcmp(name->ptr, callback_id_name, name->len) != 0)
            continue;
        const XLA_FFI_Scalar *scalar = attrs->attrs[i];
        if (attrs->types[i] != XLA_FFI_ATTR_SCALAR || scalar->dtype != XLA_FFI_DATA_S64)
            return -1;
        return *(const int64_t *)scalar->value;
    }
    return -1;
}

/* A NumPy view of `buffer` (a new reference), writable or not; NULL with an exception set. */
static PyObject *view_of(const XLA_FFI_Buffer *buffer, int writable)
{
    PyObject *descr = NULL;
    if (buffer->dtype >= 0 && buffer->dtype < PyTuple_GET_SIZE(dtype_of_code))
        descr = PyTuple_GET_ITEM(dtype_of_code, buffer->dtype);
    if (descr == NULL || descr == Py_None)
        return PyErr_Format(PyExc_TypeError,
                            "host callbacks do not support XLA element type %d", buffer->dtype);
    if (buffer->rank > NPY_MAXDIMS)
        return PyErr_Format(PyExc_ValueError, "a buffer of rank %lld", (long long)buffer->rank);
    npy_intp dims[NPY_MAXDIMS];
    npy_intp size = 1;
    for (int64_t d = 0; d < buffer->rank; d++) {
        dims[d] = (npy_intp)buffer->dims[d];
        size *= dims[d];
    }
    int flags = writable ? NPY_ARRAY_CARRAY : (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    Py_INCREF(descr); /* (stolen by PyArray_NewFromDescr) */
    return PyArray_NewFromDescr(&PyArray_Type, (PyArray_Descr *)descr, (int)buffer->rank, dims,
                                NULL, size ? buffer->data : NULL, size ? flags : 0, NULL);
}

/* Views of every buffer but tokens, as a tuple (a new reference); NULL with an exception. */
static PyObject *views_of(XLA_FFI_Buffer **buffers, int64_t count, int writable)
{
    PyObject *views = PyList_New(0);
    for (int64_t i = 0; views != NULL && i < count; i++) {
        if (buffers[i]->dtype == XLA_FFI_DATA_TOKEN)
            continue;
        PyObject *view = view_of(buffers[i], writable);
        if (view == NULL || PyList_Append(views, view) < 0)
            Py_CLEAR(views);
        Py_XDECREF(view);
    }
    if (views == NULL)
        return NULL;
    PyObject *tuple = PyList_AsTuple(views);
    Py_DECREF(views);
    return tuple;
}

/* The Python handler's answer for this frame: the error it returned, by address. */
static XLA_FFI_Error *handle_in_python_at(XLA_FFI_CallFrame *frame)
{
    PyObject *address = PyObject_CallFunction(handle_in_python, "K",
                                              (unsigned long long)(uintptr_t)frame);
    if (address == NULL) {
        PyErr_WriteUnraisable(handle_in_python);
        return new_error(frame, "host callback failed", XLA_FFI_ERROR_INTERNAL);
    }
    XLA_FFI_Error *error = (XLA_FFI_Error *)(uintptr_t)PyLong_AsUnsignedLongLong(address);
    Py_DECREF(address);
    return error;
}

/* One call, the GIL held: views, the Python half, its answer as an XLA FFI error or NULL. */
static XLA_FFI_Error *run(XLA_FFI_CallFrame *frame, int64_t callback_id)
{
    PyObject *operands = views_of(frame->args.args, frame->args.size, 0);
    PyObject *results = operands ? views_of(frame->rets.rets, frame->rets.size, 1) : NULL;
    PyObject *answer = NULL;
    if (results != NULL)
        answer = PyObject_CallFunction(run_in_python, "LOO", (long long)callback_id, operands,
                                       results);
    Py_XDECREF(operands);
    Py_XDECREF(results);
    if (answer == NULL) { /* (a view could not be made: an unsupported dtype) */
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyObject *text = value ? PyObject_Str(value) : NULL;
        const char *message = text ? PyUnicode_AsUTF8(text) : NULL;
        XLA_FFI_Error *error = new_error(frame, message ? message : "host callback failed",
                                         XLA_FFI_ERROR_INVALID_ARGUMENT);
        PyErr_Clear();
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        return error;
    }
    XLA_FFI_Error *error = NULL;
    if (answer != Py_None) {
        const char *message = NULL;
        int code = XLA_FFI_ERROR_INTERNAL;
        if (PyTuple_Check(answer) && PyTuple_GET_SIZE(answer) == 2) {
            message = PyUnicode_AsUTF8(PyTuple_GET_ITEM(answer, 0));
            code = (int)PyLong_AsLong(PyTuple_GET_ITEM(answer, 1));
        }
        if (message == NULL || PyErr_Occurred()) {
            PyErr_Clear();
            message = "host callback failed";
        }
        error = new_error(frame, message, code);
    }
    Py_DECREF(answer);
    return error;
}

static XLA_FFI_Error *host_callback(XLA_FFI_CallFrame *frame)
{
    const XLA_FFI_Extension_Base *extension = frame->extension_start;
    int metadata_query = extension != NULL && extension->type == XLA_FFI_EXTENSION_METADATA;
    if (!metadata_query && frame->stage != XLA_FFI_STAGE_EXECUTE)
        return NULL;
    PyGILState_STATE gil = PyGILState_Ensure();
    XLA_FFI_Error *error;
    if (metadata_query || !first_call_done) {
        first_call_done = !metadata_query;
        error = handle_in_python_at(frame);
    } else {
        int64_t callback_id = callback_id_of(&frame->attrs);
        error = callback_id < 0 ? new_error(frame, "the custom call has no int64 attribute "
                                                   "'callback_id'", XLA_FFI_ERROR_INVALID_ARGUMENT)
                                : run(frame, callback_id);
    }
    PyGILState_Release(gil);
    return error;
}

PyDoc_STRVAR(host_callback_handler_doc,
             "host_callback_handler(run, handle_at, dtype_of_code) -> address\n\n"
             "The address of the C handler, which calls `run(callback_id, operands, results)`\n"
             "and passes the calls it does not handle to `handle_at(frame address)`;\n"
             "`dtype_of_code`: a tuple of NumPy dtypes (or None) indexed by XLA FFI data type.");

static PyObject *host_callback_handler(PyObject *Py_UNUSED(self), PyObject *const *args,
                                       Py_ssize_t nargs)
{
    if (nargs != 3 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1]) ||
        !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "host_callback_handler(run, handle_at, dtype_of_code: tuple)");
        return NULL;
    }
    Py_INCREF(args[0]);
    Py_XSETREF(run_in_python, args[0]);
    Py_INCREF(args[1]);
    Py_XSETREF(handle_in_python, args[1]);
    Py_INCREF(args[2]);
    Py_XSETREF(dtype_of_code, args[2]);
    return PyLong_FromVoidPtr((void *)host_callback);
}

static PyMethodDef callbacks_methods[] = {
    {"host_callback_handler", (PyCFunction)(void (*)(void))host_callback_handler, METH_FASTCALL,
     host_callback_handler_doc},
    {NULL, NULL, 0, NULL},
};

int accel_add_callbacks(PyObject *module)
{
    return PyModule_AddFunctions(module, callbacks_methods);
}
