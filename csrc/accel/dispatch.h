/* What the two halves of the jit call path share: dispatch.c (`Runtime`, the PJRT functions;
 * `Program`, one compiled program's prepared call and how to wrap its outputs) and
 * fast_call.c (`FastCall`, one signature of a jitted function: its arguments checked and
 * handed to a Program). */
#ifndef TRACEJIT_ACCEL_DISPATCH_H
#define TRACEJIT_ACCEL_DISPATCH_H

#include "accel.h"

typedef void *(*pjrt_function)(void *args); /* PJRT_Error *PJRT_X(PJRT_X_Args *) */

typedef struct Runtime Runtime;

/* The `__slots__` of tracejit's Buffer and Array classes this code reads and fills, found by
 * name when a Program is made (their offsets in `buffer_slot`, `array_slot`). */
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

enum array_slot { ARRAY_BUFFER, ARRAY_SIGNATURE, ARRAY_WEAK_TYPE, ARRAY_SLOTS };

static inline PyObject *slot_get(PyObject *object, Py_ssize_t offset) /* borrowed or NULL */
{
    return *(PyObject **)((char *)object + offset);
}

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
    void *client_address, *device_address; /* PJRT_Client*, PJRT_Device* */
    PyTypeObject *buffer_type, *array_type, *host_array_type;
    Py_ssize_t buffer_slot[BUFFER_SLOTS];
    Py_ssize_t array_slot[ARRAY_SLOTS];
    output_spec *output;
    int busy; /* a call is using the tables (read and written under the GIL) */
} Program;

extern PyTypeObject accel_program_type;

/* Raise the runtime's exception for a PJRT_Error* (which the runtime's `error` destroys);
 * returns NULL. */
PyObject *accel_raise_pjrt_error(Runtime *runtime, void *error);

/* The outputs the last execution left in the program's output table, as a list of Arrays. */
PyObject *accel_program_outputs(Program *program);

/* A Buffer object owning the PJRT buffer `pointer` (of `spec`'s shape and dtype), as
 * `new_buffer` makes it but for `_ptr`, the cffi pointer, which Python makes from `_address`
 * when it first needs it. */
PyObject *accel_program_buffer(Program *program, void *pointer, const output_spec *spec);

/* A PJRT buffer on the program's device holding a copy of one element of PJRT type `type` at
 * `data`, copied within the call (so `data` may live on the caller's stack). Returns the
 * PJRT_Error* of the transfer, or NULL. */
void *accel_buffer_from_scalar(Program *program, int type, const void *data, void **buffer);

#endif
