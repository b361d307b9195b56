/* The module object of tracejit's C accelerator: NumPy's C API and each part's functions. */
#define TRACEJIT_ACCEL_MODULE
#include "accel.h"

static struct PyModuleDef accel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tracejit._src._accel",
    .m_doc = "C versions of tracejit's hot paths (optional; see tracejit._src.accel).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__accel(void)
{
    import_array();
    PyObject *module = PyModule_Create(&accel_module);
    if (module == NULL)
        return NULL;
    if (accel_add_threefry(module) < 0 || accel_add_callbacks(module) < 0 ||
        accel_add_eager(module) < 0 || accel_add_dispatch(module) < 0 ||
        accel_add_fast_call(module) < 0 ||
        accel_add_sampling(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
