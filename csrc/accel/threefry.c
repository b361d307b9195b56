/* The Threefry-2x32 block cipher (20 rounds) over uint32 arrays: the eager implementation of
 * the `threefry2x32` primitive. Its Python twin is `_threefry_rounds` in tracejit/_src/prng.py,
 * which runs the same rounds as NumPy operations on whole arrays: twenty-odd array operations,
 * each a full pass and a temporary, where this is one pass with the state in registers. */
#include <stdint.h>

#include "accel.h"

static const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};

static inline uint32_t rotate_left(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* Encrypt the pair (*x1, *x2) in place under the key (key1, key2). */
static inline void encrypt(uint32_t key1, uint32_t key2, uint32_t *x1, uint32_t *x2)
{
    const uint32_t keys[3] = {key1, key2, key1 ^ key2 ^ 0x1BD11BDAu};
    uint32_t a = *x1 + keys[0], b = *x2 + keys[1];
    for (int group = 0; group < 5; group++) {
        for (int i = 0; i < 4; i++) {
            a += b;
            b = rotate_left(b, rotations[group % 2][i]) ^ a;
        }
        a += keys[(group + 1) % 3];
        b += keys[(group + 2) % 3] + (uint32_t)(group + 1);
    }
    *x1 = a;
    *x2 = b;
}

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

static PyObject *threefry2x32(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
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
    for (npy_intp i = 0; i < count; i++) {
        uint32_t a = operand[2].data[i * operand[2].step];
        uint32_t b = operand[3].data[i * operand[3].step];
        encrypt(operand[0].data[i * operand[0].step], operand[1].data[i * operand[1].step],
                &a, &b);
        out1[i] = a;
        out2[i] = b;
    }
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
