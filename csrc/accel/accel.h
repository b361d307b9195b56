/* tracejit's optional C accelerator: the declarations its parts share.
 *
 * One extension module, `tracejit._src._accel`, built from one file per part. Each part adds
 * its functions to the module in an `accel_add_<part>` function that module.c calls; every
 * function has a Python twin in tracejit that gives the same results, so the accelerator only
 * ever changes speed (tests/test_accel.py compares the two).
 */
#ifndef TRACEJIT_ACCEL_H
#define TRACEJIT_ACCEL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* NumPy's C API is a table of function pointers that import_array() fills in once, in
 * module.c; the other files see the same table through this symbol. */
#define PY_ARRAY_UNIQUE_SYMBOL tracejit_accel_ARRAY_API
#ifndef TRACEJIT_ACCEL_MODULE
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

int accel_add_threefry(PyObject *module);
int accel_add_callbacks(PyObject *module);
int accel_add_eager(PyObject *module);
int accel_add_dispatch(PyObject *module); /* after it: fast_call */
int accel_add_fast_call(PyObject *module);
int accel_add_sampling(PyObject *module);

#endif
