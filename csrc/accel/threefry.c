/* The Threefry-2x32 block cipher (20 rounds) over uint32 arrays: the eager implementation of
 * the `threefry2x32` primitive. Its Python twin is `_threefry_rounds` in tracejit/_src/prng.py,
 * which runs the same rounds as NumPy operations on whole arrays: twenty-odd array operations,
 * each a full pass and a temporary, where this is one pass with the state in registers. */
#include "accel.h"
#include "threefry.h"

/* An operand as a flat uint32 sequence: its data and its stride in elements (0 for one
 * element, broadcast). Borrowed from an array the caller holds. */
typedef struct {
    const uint32_t *data;
    npy_intp step;
} words;

static int as_words(PyObject *operand, npy_intp count, const char *name, words *out)
{
    if (!PyArray_Check(operand) || PyArray_TYPE((PyArrayObject *)operand) != NPY_UINT32 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)operand)) {
        PyErr_Format(PyExc_TypeError, "threefry2x32: %s must be a C-contiguous uint32 array",
                     name);
        return -1;
    }
    npy_intp size = PyArray_SIZE((PyArrayObject *)operand);
    if (size != count && size != 1) {
        PyErr_Format(PyExc_ValueError,
                     "threefry2x32: %s has %zd elements, expected 1 or %zd", name, size, count);
        return -1;
    }
    out->data = PyArray_DATA((PyArrayObject *)operand);
    out->step = size == 1 ? 0 : 1;
    return 0;
}

PyDoc_STRVAR(threefry2x32_doc,
             "threefry2x32(key1, key2, x1, x2, count) -> (y1, y2)\n\n"
             "Encrypt `count` word pairs: each operand is a C-contiguous uint32 array of\n"
             "`count` elements or of one (broadcast); the results are new flat arrays.");

/* Encrypt `count` pairs of operands given as words; inlined with constant steps (0: one
 * element broadcast, 1: contiguous) it becomes a loop the compiler vectorizes. */
static inline __attribute__((always_inline)) void
encrypt_words(const words operand[4], npy_intp count, uint32_t *out1, uint32_t *out2,
              npy_intp key_step, npy_intp x_step)
{
    const uint32_t *key1 = operand[0].data, *key2 = operand[1].data;
    const uint32_t *x1 = operand[2].data, *x2 = operand[3].data;
    for (npy_intp i = 0; i < count; i++) {
        uint32_t a = x1[i * x_step], b = x2[i * x_step];
        threefry_encrypt(key1[i * key_step], key2[i * key_step], &a, &b);
        out1[i] = a;
        out2[i] = b;
    }
}

/* The common layouts (one key and many counters, as random_bits and random_split have; a
 * key per counter) get loops of their own; any other mix of broadcast and contiguous
 * operands the general one. */
THREEFRY_VECTOR_CLONES static void encrypt_all(const words operand[4], npy_intp count,
                                               uint32_t *out1, uint32_t *out2)
{
    npy_intp key_step = operand[0].step, x_step = operand[2].step;
    if (operand[1].step == key_step && operand[3].step == x_step && x_step == 1) {
        if (key_step == 0)
            encrypt_words(operand, count, out1, out2, 0, 1);
        else
            encrypt_words(operand, count, out1, out2, 1, 1);
        return;
    }
    for (npy_intp i = 0; i < count; i++) {
        uint32_t a = operand[2].data[i * operand[2].step];
        uint32_t b = operand[3].data[i * operand[3].step];
        threefry_encrypt(operand[0].data[i * operand[0].step],
                         operand[1].data[i * operand[1].step], &a, &b);
        out1[i] = a;
        out2[i] = b;
    }
}

static PyObject *threefry2x32(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "threefry2x32 takes 5 arguments");
        return NULL;
    }
    npy_intp count = PyLong_AsSsize_t(args[4]);
    if (count < 0)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "negative count");
    static const char *names[4] = {"key1", "key2", "x1", "x2"};
    words operand[4];
    for (int i = 0; i < 4; i++)
        if (as_words(args[i], count, names[i], &operand[i]) < 0)
            return NULL;
    PyObject *y1 = PyArray_SimpleNew(1, &count, NPY_UINT32);
    PyObject *y2 = y1 ? PyArray_SimpleNew(1, &count, NPY_UINT32) : NULL;
    if (y2 == NULL) {
        Py_XDECREF(y1);
        return NULL;
    }
    uint32_t *out1 = PyArray_DATA((PyArrayObject *)y1);
    uint32_t *out2 = PyArray_DATA((PyArrayObject *)y2);
    Py_BEGIN_ALLOW_THREADS
    encrypt_all(operand, count, out1, out2);
    Py_END_ALLOW_THREADS
    PyObject *result = PyTuple_Pack(2, y1, y2);
    Py_DECREF(y1);
    Py_DECREF(y2);
    return result;
}

static PyMethodDef threefry_methods[] = {
    {"threefry2x32", (PyCFunction)(void (*)(void))threefry2x32, METH_FASTCALL, threefry2x32_doc},
    {NULL, NULL, 0, NULL},
};

int accel_add_threefry(PyObject *module) { return PyModule_AddFunctions(module, threefry_methods); }
