/* Eager random draws in one call: the bits of a concrete key, turned into the sample.
 *
 * An eager `random.uniform(key, (100,))` otherwise runs a small compiled program (the key
 * transferred, the program executed, the result fetched): some 70 us for what is a microsecond
 * of arithmetic. These functions compute JAX's samplers directly on the key's words: the
 * Threefry bits of both counter layouts (`jax_threefry_partitionable` on or off), JAX's
 * conversion of bits to floats and its scaling, in one pass over the result.
 *
 * Their Python twins are the samplers of tracejit/_src/random/ (distributions.py, keys.py),
 * which stage the same algorithms from the key primitives of tracejit/_src/prng.py. Policy
 * stays there: each function here returns None, declining, for anything but the plain cases
 * (a concrete key, a shape of Python ints, a dtype its table lists, Python scalar bounds), and
 * the caller then takes the Python path, which raises JAX's errors and handles the rest.
 *
 * Every function takes a `state` tuple that tracejit/_src/random/fast_path.py rebuilds when
 * the configuration changes: (flags, dtype of typed keys, bfloat16's dtype, the float, unsigned
 * and signed dtype tables (dtype argument -> NumPy dtype, None for the default), the most bytes
 * a result may take).
 */
#include <math.h>
#include <string.h>

#include "accel.h"
#include "threefry.h"

#if NPY_ABI_VERSION < 0x02000000 /* NumPy 1's headers, where the field is public */
#define PyDataType_ELSIZE(dtype) ((dtype)->elsize)
#endif

/* state[0]: what the configuration allows. */
enum { PARTITIONABLE = 1, X64 = 2, RAW_KEYS = 4 };

typedef struct {
    long flags;
    PyArray_Descr *key_dtype;
    PyArray_Descr *bfloat16;
    PyObject *floats, *uints, *ints; /* dtype tables */
    npy_intp max_bytes;
} config;

/* Loops of fused multiply-adds are also compiled for CPUs that have the instruction, where
 * GCC can choose at load time (elsewhere fmaf is the C library's, as exact and slower). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define FMA_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FMA_CLONES
#endif

/* Results of more elements release the GIL while they are computed. */
#define RELEASE_GIL_FROM 65536

static int read_config(PyObject *state, config *out)
{
    if (!PyTuple_CheckExact(state) || PyTuple_GET_SIZE(state) != 7) {
        PyErr_SetString(PyExc_TypeError, "sampling: malformed state");
        return -1;
    }
    out->flags = PyLong_AsLong(PyTuple_GET_ITEM(state, 0));
    out->key_dtype = (PyArray_Descr *)PyTuple_GET_ITEM(state, 1);
    out->bfloat16 = (PyArray_Descr *)PyTuple_GET_ITEM(state, 2);
    out->floats = PyTuple_GET_ITEM(state, 3);
    out->uints = PyTuple_GET_ITEM(state, 4);
    out->ints = PyTuple_GET_ITEM(state, 5);
    out->max_bytes = PyLong_AsSsize_t(PyTuple_GET_ITEM(state, 6));
    return PyErr_Occurred() ? -1 : 0;
}

/* --- arguments: 1 taken, 0 declined, -1 an error raised -------------------------------- */

typedef struct {
    uint32_t words[2];
    int typed;
    PyArray_Descr *dtype; /* of a typed key: the dtype of the keys split from it */
} key;

static int read_key(PyObject *value, const config *cfg, key *out)
{
    if (!PyArray_CheckExact(value))
        return 0;
    PyArrayObject *array = (PyArrayObject *)value;
    PyArray_Descr *dtype = PyArray_DESCR(array);
    const char *data = PyArray_BYTES(array);
    if (PyArray_NDIM(array) == 0 &&
        (dtype == cfg->key_dtype || PyArray_EquivTypes(dtype, cfg->key_dtype))) {
        memcpy(out->words, data, sizeof out->words);
        out->typed = 1;
        out->dtype = dtype;
        return 1;
    }
    if ((cfg->flags & RAW_KEYS) && PyArray_NDIM(array) == 1 && PyArray_DIM(array, 0) == 2 &&
        PyArray_TYPE(array) == NPY_UINT32 && PyArray_ISNOTSWAPPED(array)) {
        npy_intp stride = PyArray_STRIDE(array, 0);
        memcpy(&out->words[0], data, 4);
        memcpy(&out->words[1], data + stride, 4);
        out->typed = 0;
        out->dtype = NULL;
        return 1;
    }
    return 0;
}

typedef struct {
    int ndim;
    npy_intp dims[NPY_MAXDIMS];
    npy_intp size;
} shape;

/* A dimension: a Python int or a NumPy integer, in [0, 2**32). */
static int read_dim(PyObject *value, npy_intp *out)
{
    if (!PyLong_CheckExact(value) && !PyArray_IsScalar(value, Integer))
        return 0;
    int overflow;
    long long dim = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (dim == -1 && PyErr_Occurred())
        return -1;
    if (overflow || dim < 0 || dim >= (1LL << 32))
        return 0;
    *out = (npy_intp)dim;
    return 1;
}

/* A shape: a Python int or a tuple of them, of fewer than 2**32 elements (more are refused
 * by the Python path, which counts in one word). */
static int read_shape(PyObject *value, shape *out)
{
    out->size = 1;
    if (PyTuple_CheckExact(value)) {
        out->ndim = (int)PyTuple_GET_SIZE(value);
        if (out->ndim > NPY_MAXDIMS)
            return 0;
        for (int i = 0; i < out->ndim; i++) {
            int taken = read_dim(PyTuple_GET_ITEM(value, i), &out->dims[i]);
            if (taken <= 0)
                return taken;
        }
    } else {
        out->ndim = 1;
        int taken = read_dim(value, &out->dims[0]);
        if (taken <= 0)
            return taken;
    }
    for (int i = 0; i < out->ndim; i++) {
        if (out->dims[i] && out->size > ((npy_intp)1 << 32) / out->dims[i])
            return 0;
        out->size *= out->dims[i];
    }
    return out->size < ((npy_intp)1 << 32);
}

/* The dtype a table gives for a dtype argument (a borrowed reference). */
static int read_dtype(PyObject *table, PyObject *argument, PyArray_Descr **out)
{
    PyObject *dtype = PyDict_GetItemWithError(table, argument);
    if (dtype == NULL) {
        if (!PyErr_Occurred())
            return 0;
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear(); /* an unhashable argument: the Python path says what is wrong */
        return 0;
    }
    *out = (PyArray_Descr *)dtype;
    return 1;
}

/* A Python float, or an int that a double holds exactly. */
static int read_real(PyObject *value, double *out)
{
    if (PyFloat_Check(value)) {
        *out = PyFloat_AS_DOUBLE(value);
        return 1;
    }
    if (!PyLong_CheckExact(value))
        return 0;
    int overflow;
    long long integer = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (integer == -1 && PyErr_Occurred())
        return -1;
    if (overflow || llabs(integer) > (1LL << 53))
        return 0;
    *out = (double)integer;
    return 1;
}

static PyArrayObject *new_array(PyArray_Descr *dtype, int ndim, const npy_intp *dims)
{
    Py_INCREF(dtype);
    return (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, dtype, ndim, (npy_intp *)dims,
                                                 NULL, NULL, 0, NULL);
}

/* The result array of `sample`'s shape, unless it would take more than the allowed bytes
 * (then NULL with no error: declined, for the Python path to refuse). */
static PyArrayObject *new_result(PyArray_Descr *dtype, const shape *sample, const config *cfg)
{
    if (sample->size * (npy_intp)PyDataType_ELSIZE(dtype) > cfg->max_bytes)
        return NULL;
    return new_array(dtype, sample->ndim, sample->dims);
}

/* --- the bits ------------------------------------------------------------------------- */

/* The partitionable layout: element i is the encryption of the counter pair (0, first + i),
 * its two words combined as `combine` says. */
#define PARTITIONABLE_BITS(name, type, combine)                                              \
    THREEFRY_VECTOR_CLONES static void name(uint32_t key1, uint32_t key2, uint32_t first,    \
                                            npy_intp count, type *out)                      \
    {                                                                                        \
        for (npy_intp i = 0; i < count; i++) {                                               \
            uint32_t a = 0, b = first + (uint32_t)i;                                         \
            threefry_encrypt(key1, key2, &a, &b);                                            \
            out[i] = (type)(combine);                                                        \
        }                                                                                    \
    }

PARTITIONABLE_BITS(partitionable_bits8, uint8_t, a ^ b)
PARTITIONABLE_BITS(partitionable_bits16, uint16_t, a ^ b)
PARTITIONABLE_BITS(partitionable_bits32, uint32_t, a ^ b)
PARTITIONABLE_BITS(partitionable_bits64, uint64_t, ((uint64_t)a << 32) | b)

/* New keys in the partitionable layout: key i is the encryption of (0, i), both words. */
THREEFRY_VECTOR_CLONES static void partitionable_keys(uint32_t key1, uint32_t key2,
                                                      npy_intp count, uint32_t *out)
{
    for (npy_intp i = 0; i < count; i++) {
        uint32_t a = 0, b = (uint32_t)i;
        threefry_encrypt(key1, key2, &a, &b);
        out[2 * i] = a;
        out[2 * i + 1] = b;
    }
}

/* The original layout: `count` words, the encryptions of the counters 0 .. count-1 split in
 * two halves (the second padded with a 0 to the first's length), first words then second. */
THREEFRY_VECTOR_CLONES static void sequential_words(uint32_t key1, uint32_t key2,
                                                    npy_intp count, uint32_t *out)
{
    npy_intp half = (count + 1) / 2, pairs = count - half;
    for (npy_intp i = 0; i < pairs; i++) {
        uint32_t a = (uint32_t)i, b = (uint32_t)(half + i);
        threefry_encrypt(key1, key2, &a, &b);
        out[i] = a;
        out[half + i] = b;
    }
    if (pairs < half) { /* the padded pair, whose second word falls off the end */
        uint32_t a = (uint32_t)pairs, b = 0;
        threefry_encrypt(key1, key2, &a, &b);
        out[pairs] = a;
    }
}

/* The original layout's values of `width` bits from its words: 64-bit values are a word of
 * the first half (high) and one of the second (low); narrower ones fill each word from its
 * low bits up. */
static void sequential_values(const uint32_t *words, int width, npy_intp size, void *out)
{
    if (width == 64) {
        uint64_t *values = out;
        for (npy_intp i = 0; i < size; i++)
            values[i] = ((uint64_t)words[i] << 32) | words[size + i];
        return;
    }
    int per_word = 32 / width;
    for (npy_intp i = 0; i < size; i++) {
        uint32_t value = words[i / per_word] >> (width * (i % per_word));
        if (width == 8)
            ((uint8_t *)out)[i] = (uint8_t)value;
        else
            ((uint16_t *)out)[i] = (uint16_t)value;
    }
}

/* `size` random values of `width` bits (8, 16, 32, 64) from `k`, into `out`; -1 when the
 * original layout's words find no memory (no error set: the GIL may be released). */
static int fill_bits(const key *k, long flags, int width, npy_intp size, void *out)
{
    uint32_t key1 = k->words[0], key2 = k->words[1];
    if (flags & PARTITIONABLE) {
        switch (width) {
        case 8: partitionable_bits8(key1, key2, 0, size, out); break;
        case 16: partitionable_bits16(key1, key2, 0, size, out); break;
        case 32: partitionable_bits32(key1, key2, 0, size, out); break;
        default: partitionable_bits64(key1, key2, 0, size, out); break;
        }
        return 0;
    }
    npy_intp count = (width * size + 31) / 32;
    if (width == 32) {
        sequential_words(key1, key2, count, out);
        return 0;
    }
    uint32_t *words = PyMem_RawMalloc((size_t)(count ? count : 1) * sizeof(uint32_t));
    if (words == NULL)
        return -1;
    sequential_words(key1, key2, count, words);
    sequential_values(words, width, size, out);
    PyMem_RawFree(words);
    return 0;
}

/* The two keys `split(k)` gives (JAX's samplers that need two draws split their key). */
static void split_in_two(const key *k, long flags, key out[2])
{
    uint32_t words[4];
    if (flags & PARTITIONABLE)
        partitionable_keys(k->words[0], k->words[1], 2, words);
    else
        sequential_words(k->words[0], k->words[1], 4, words);
    for (int i = 0; i < 2; i++) {
        out[i] = *k;
        out[i].words[0] = words[2 * i];
        out[i].words[1] = words[2 * i + 1];
    }
}

/* --- floats from bits ----------------------------------------------------------------- */

static inline float float_of_bits(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline uint32_t bits_of_float(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static inline double double_of_bits(uint64_t bits)
{
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* StableHLO's max: NaN if either is. */
static inline float max_f32(float a, float b) { return a != a ? a : b != b ? b : a > b ? a : b; }
static inline double max_f64(double a, double b)
{
    return a != a ? a : b != b ? b : a > b ? a : b;
}

/* Uniform floats in [0, 1): random mantissa bits under the exponent of 1.0 give [1, 2). The
 * loops convert in place, the bits being as wide as the floats. */
THREEFRY_VECTOR_CLONES static void unit_floats32(npy_intp size, uint32_t *bits)
{
    for (npy_intp i = 0; i < size; i++)
        bits[i] = bits_of_float(float_of_bits((bits[i] >> 9) | 0x3F800000u) - 1.0f);
}

THREEFRY_VECTOR_CLONES static void unit_floats64(npy_intp size, uint64_t *bits)
{
    for (npy_intp i = 0; i < size; i++) {
        double value = double_of_bits((bits[i] >> 12) | 0x3FF0000000000000u) - 1.0;
        memcpy(&bits[i], &value, sizeof value);
    }
}

/* float16 from 16 random bits: 10 mantissa bits, k / 1024 for k < 1024, an exact float16
 * whose bits follow from the float32's (exponent rebiased, mantissa shortened). */
static void unit_floats16(npy_intp size, uint16_t *bits)
{
    for (npy_intp i = 0; i < size; i++) {
        uint32_t k = bits[i] >> 6;
        uint32_t f = bits_of_float((float)k / 1024.0f);
        bits[i] = k ? (uint16_t)((((f >> 23) - 112) << 10) | ((f >> 13) & 0x3FF)) : 0;
    }
}

/* bfloat16 from 8 random bits (its 7 mantissa bits need no more): k / 128 for k < 128, the
 * high half of its float32. The 8-bit values fill the low half of the buffer; converted from
 * the last down, each lands at or beyond the byte it was read from. */
static void unit_bfloats16(npy_intp size, void *buffer)
{
    const uint8_t *random = buffer;
    uint16_t *out = buffer;
    for (npy_intp i = size - 1; i >= 0; i--)
        out[i] = (uint16_t)(bits_of_float((float)(random[i] >> 1) / 128.0f) >> 16);
}

/* [minval, maxval): u * (maxval - minval) + minval, fused into one rounding as XLA fuses it,
 * and no lower than minval. */
FMA_CLONES static void scale_floats32(npy_intp size, float *values, float minval, float maxval)
{
    float span = maxval - minval;
    for (npy_intp i = 0; i < size; i++)
        values[i] = max_f32(minval, fmaf(values[i], span, minval));
}

FMA_CLONES static void scale_floats64(npy_intp size, double *values, double minval, double maxval)
{
    double span = maxval - minval;
    for (npy_intp i = 0; i < size; i++)
        values[i] = max_f64(minval, fma(values[i], span, minval));
}

/* Uniform floats of `dtype` into `out` (the result's data). 16-bit floats are taken only on
 * [0, 1), where no arithmetic rounds: 0 declines. */
static int fill_uniform(const key *k, const config *cfg, PyArray_Descr *dtype, npy_intp size,
                        double minval, double maxval, void *out)
{
    int type = dtype->type_num;
    int unit = minval == 0.0 && !signbit(minval) && maxval == 1.0;
    if (type == NPY_FLOAT) {
        if (fill_bits(k, cfg->flags, 32, size, out) < 0)
            return -1;
        unit_floats32(size, out);
        if (!unit)
            scale_floats32(size, out, (float)minval, (float)maxval);
    } else if (type == NPY_DOUBLE) {
        if (fill_bits(k, cfg->flags, 64, size, out) < 0)
            return -1;
        unit_floats64(size, out);
        if (!unit)
            scale_floats64(size, out, minval, maxval);
    } else if (type == NPY_HALF && unit) {
        if (fill_bits(k, cfg->flags, 16, size, out) < 0)
            return -1;
        unit_floats16(size, out);
    } else if (dtype == cfg->bfloat16 && unit) {
        if (fill_bits(k, cfg->flags, 8, size, out) < 0)
            return -1;
        unit_bfloats16(size, out);
    } else {
        return 0;
    }
    return 1;
}

/* --- randint ------------------------------------------------------------------------- */

/* JAX's randint of one element: two words of random bits reduced modulo the span, as
 * (high * 2**bits + low) % span computed without overflow, 2**bits % span being
 * (2**(bits/2) % span)**2 % span; the arithmetic wraps as XLA's unsigned arithmetic does. */
#define RANDINT_OFFSETS(name, type, bits)                                                    \
    static void name(npy_intp size, const type *high, const type *low, type span,            \
                     type *offsets)                                                          \
    {                                                                                        \
        type multiplier = (type)(((type)1 << (bits / 2)) % span);                            \
        multiplier = (type)((type)(multiplier * multiplier) % span);                         \
        for (npy_intp i = 0; i < size; i++)                                                  \
            offsets[i] = (type)((type)((type)(high[i] % span) * multiplier) + low[i] % span) \
                         % span;                                                             \
    }

RANDINT_OFFSETS(randint_offsets32, uint32_t, 32)
RANDINT_OFFSETS(randint_offsets64, uint64_t, 64)

typedef struct {
    int bits;          /* of the arithmetic: 32 or 64 */
    uint64_t minval;   /* the lower bound, as the arithmetic's unsigned type wraps it */
    uint64_t span;     /* how many values: from 1 to 2**bits - 1 */
} integer_range;

static long long clamp(long long x, long long low, long long high)
{
    return x < low ? low : x > high ? high : x;
}

/* The values randint draws for Python int bounds `minval`, `maxval` and results of
 * `dtype`: the bounds are weakly typed ints of the default int type (int32, or int64 under
 * x64), clipped to what `dtype` holds; a `maxval` beyond the dtype's largest value makes the
 * span one larger. Integers narrower than 32 bits are drawn as int32 between bounds clipped
 * to them. 0 declines (a span of 2**bits, which the arithmetic cannot hold; narrow integers'
 * bounds beyond int32). */
static int randint_range(long long minval, long long maxval, PyArray_Descr *dtype, long flags,
                         integer_range *out)
{
    int bits = PyDataType_ELSIZE(dtype) * 8, is_signed = PyTypeNum_ISSIGNED(dtype->type_num);
    long long dtype_min = is_signed ? -(1LL << (bits - 1)) : 0;
    unsigned long long dtype_max = is_signed ? (1ULL << (bits - 1)) - 1 : ~0ULL >> (64 - bits);
    long long operand_min = (flags & X64) ? LLONG_MIN : INT32_MIN;
    long long operand_max = (flags & X64) ? LLONG_MAX : INT32_MAX;
    if (minval < operand_min || minval > operand_max || maxval < operand_min ||
        maxval > operand_max)
        return 0;
    if (bits < 32) {
        /* (the bounds are converted to int32 before they are clipped: beyond it they wrap) */
        if (minval < INT32_MIN || minval > INT32_MAX || maxval < INT32_MIN || maxval > INT32_MAX)
            return 0;
        minval = clamp(minval, dtype_min, (long long)dtype_max);
        maxval = clamp(maxval, dtype_min, (long long)dtype_max + 1);
        bits = 32;
        dtype_min = INT32_MIN;
        dtype_max = INT32_MAX;
        operand_min = INT32_MIN;
        operand_max = INT32_MAX;
    }
    long long low = dtype_min > operand_min ? dtype_min : operand_min;
    long long high = dtype_max < (unsigned long long)operand_max ? (long long)dtype_max
                                                                  : operand_max;
    int beyond_dtype = maxval > high;
    minval = clamp(minval, low, high);
    maxval = clamp(maxval, low, high);
    uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    uint64_t span = ((uint64_t)maxval - (uint64_t)minval) & mask;
    if (maxval <= minval)
        span = 1;
    else if (beyond_dtype)
        span = (span + 1) & mask;
    if (span == 0)
        return 0;
    out->bits = bits;
    out->minval = (uint64_t)minval & mask;
    out->span = span;
    return 1;
}

/* The results: minval + offset, wrapping in the arithmetic's width, stored in `dtype`'s. */
static void store_integers(const integer_range *range, const void *offsets, npy_intp size,
                           int itemsize, void *out)
{
    for (npy_intp i = 0; i < size; i++) {
        uint64_t value = range->minval + (range->bits == 64 ? ((const uint64_t *)offsets)[i]
                                                            : ((const uint32_t *)offsets)[i]);
        switch (itemsize) {
        case 1: ((uint8_t *)out)[i] = (uint8_t)value; break;
        case 2: ((uint16_t *)out)[i] = (uint16_t)value; break;
        case 4: ((uint32_t *)out)[i] = (uint32_t)value; break;
        default: ((uint64_t *)out)[i] = value; break;
        }
    }
}

static int fill_randint(const key *k, long flags, const integer_range *range, npy_intp size,
                        int itemsize, void *out)
{
    key halves[2];
    split_in_two(k, flags, halves);
    size_t bytes = (size_t)(size ? size : 1) * (size_t)(range->bits / 8);
    char *buffer = PyMem_RawMalloc(3 * bytes);
    if (buffer == NULL)
        return -1;
    void *high = buffer, *low = buffer + bytes, *offsets = buffer + 2 * bytes;
    if (fill_bits(&halves[0], flags, range->bits, size, high) < 0 ||
        fill_bits(&halves[1], flags, range->bits, size, low) < 0) {
        PyMem_RawFree(buffer);
        return -1;
    }
    if (range->bits == 64)
        randint_offsets64(size, high, low, range->span, offsets);
    else
        randint_offsets32(size, high, low, (uint32_t)range->span, offsets);
    store_integers(range, offsets, size, itemsize, out);
    PyMem_RawFree(buffer);
    return 1;
}

/* --- the functions ------------------------------------------------------------------- */

static PyObject *declined(int taken) { return taken < 0 ? NULL : Py_NewRef(Py_None); }

static int check_arguments(const char *name, Py_ssize_t nargs, Py_ssize_t expected)
{
    if (nargs == expected)
        return 0;
    PyErr_Format(PyExc_TypeError, "%s takes %zd arguments (%zd given)", name, expected, nargs);
    return -1;
}

/* Runs `fill` on the result's data, without the GIL for large results; the result, or NULL
 * with MemoryError, or None when `fill` declined. */
#define FILL_RESULT(result, size, call)                                                      \
    do {                                                                                     \
        int status_;                                                                         \
        if ((size) >= RELEASE_GIL_FROM) {                                                    \
            Py_BEGIN_ALLOW_THREADS status_ = (call);                                         \
            Py_END_ALLOW_THREADS                                                             \
        } else {                                                                             \
            status_ = (call);                                                                \
        }                                                                                    \
        if (status_ <= 0) {                                                                  \
            Py_DECREF(result);                                                               \
            return status_ < 0 ? PyErr_NoMemory() : Py_NewRef(Py_None);                      \
        }                                                                                    \
        return (PyObject *)(result);                                                         \
    } while (0)

PyDoc_STRVAR(uniform_doc, "uniform(key, shape, dtype, minval, maxval, state) -> array or None");

static PyObject *uniform(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    config cfg;
    key k;
    shape sample;
    PyArray_Descr *dtype;
    double minval, maxval;
    int taken;
    if (check_arguments("uniform", nargs, 6) < 0 || read_config(args[5], &cfg) < 0)
        return NULL;
    if ((taken = read_key(args[0], &cfg, &k)) <= 0 || (taken = read_shape(args[1], &sample)) <= 0 ||
        (taken = read_dtype(cfg.floats, args[2], &dtype)) <= 0 ||
        (taken = read_real(args[3], &minval)) <= 0 || (taken = read_real(args[4], &maxval)) <= 0)
        return declined(taken);
    PyArrayObject *result = new_result(dtype, &sample, &cfg);
    if (result == NULL)
        return declined(PyErr_Occurred() ? -1 : 0);
    void *data = PyArray_DATA(result);
    FILL_RESULT(result, sample.size,
                fill_uniform(&k, &cfg, dtype, sample.size, minval, maxval, data));
}

PyDoc_STRVAR(bits_doc, "bits(key, shape, dtype, state) -> array or None");

static int fill_all_bits(const key *k, long flags, int width, npy_intp size, void *out)
{
    return fill_bits(k, flags, width, size, out) < 0 ? -1 : 1;
}

static PyObject *bits(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    config cfg;
    key k;
    shape sample;
    PyArray_Descr *dtype;
    int taken;
    if (check_arguments("bits", nargs, 4) < 0 || read_config(args[3], &cfg) < 0)
        return NULL;
    if ((taken = read_key(args[0], &cfg, &k)) <= 0 || (taken = read_shape(args[1], &sample)) <= 0 ||
        (taken = read_dtype(cfg.uints, args[2], &dtype)) <= 0)
        return declined(taken);
    PyArrayObject *result = new_result(dtype, &sample, &cfg);
    if (result == NULL)
        return declined(PyErr_Occurred() ? -1 : 0);
    void *data = PyArray_DATA(result);
    int width = (int)PyDataType_ELSIZE(dtype) * 8;
    FILL_RESULT(result, sample.size, fill_all_bits(&k, cfg.flags, width, sample.size, data));
}

PyDoc_STRVAR(randint_doc, "randint(key, shape, minval, maxval, dtype, state) -> array or None");

static int read_integer(PyObject *value, long long *out)
{
    if (!PyLong_CheckExact(value))
        return 0;
    int overflow;
    *out = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (*out == -1 && PyErr_Occurred())
        return -1;
    return !overflow;
}

static PyObject *randint(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    config cfg;
    key k;
    shape sample;
    PyArray_Descr *dtype;
    long long minval, maxval;
    integer_range range;
    int taken;
    if (check_arguments("randint", nargs, 6) < 0 || read_config(args[5], &cfg) < 0)
        return NULL;
    if ((taken = read_key(args[0], &cfg, &k)) <= 0 || (taken = read_shape(args[1], &sample)) <= 0 ||
        (taken = read_integer(args[2], &minval)) <= 0 ||
        (taken = read_integer(args[3], &maxval)) <= 0 ||
        (taken = read_dtype(cfg.ints, args[4], &dtype)) <= 0 ||
        (taken = randint_range(minval, maxval, dtype, cfg.flags, &range)) <= 0)
        return declined(taken);
    PyArrayObject *result = new_result(dtype, &sample, &cfg);
    if (result == NULL)
        return declined(PyErr_Occurred() ? -1 : 0);
    void *data = PyArray_DATA(result);
    FILL_RESULT(result, sample.size,
                fill_randint(&k, cfg.flags, &range, sample.size, PyDataType_ELSIZE(dtype), data));
}

PyDoc_STRVAR(bernoulli_doc, "bernoulli(key, p, shape, state) -> array or None");

/* u < p, u uniform in [0, 1) of the default float type (a Python float `p` is weakly typed),
 * drawn into `buffer`. */
static int fill_bernoulli(const key *k, const config *cfg, double p, npy_intp size,
                          void *buffer, npy_bool *out)
{
    int x64 = (cfg->flags & X64) != 0;
    PyArray_Descr *dtype = PyArray_DescrFromType(x64 ? NPY_DOUBLE : NPY_FLOAT);
    int taken = fill_uniform(k, cfg, dtype, size, 0.0, 1.0, buffer);
    Py_DECREF(dtype);
    if (taken <= 0)
        return taken;
    if (x64) {
        for (npy_intp i = 0; i < size; i++)
            out[i] = ((double *)buffer)[i] < p;
    } else {
        float p32 = (float)p;
        for (npy_intp i = 0; i < size; i++)
            out[i] = ((float *)buffer)[i] < p32;
    }
    return 1;
}

static int fill_bernoulli_buffered(const key *k, const config *cfg, double p, npy_intp size,
                                   npy_bool *out)
{
    void *buffer = PyMem_RawMalloc((size_t)(size ? size : 1) * 8);
    if (buffer == NULL)
        return -1;
    int taken = fill_bernoulli(k, cfg, p, size, buffer, out);
    PyMem_RawFree(buffer);
    return taken;
}

static PyObject *bernoulli(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    config cfg;
    key k;
    shape sample = {.ndim = 0, .size = 1};
    int taken;
    if (check_arguments("bernoulli", nargs, 4) < 0 || read_config(args[3], &cfg) < 0)
        return NULL;
    if ((taken = read_key(args[0], &cfg, &k)) <= 0)
        return declined(taken);
    if (!PyFloat_CheckExact(args[1]))
        return declined(0);
    if (args[2] != Py_None && (taken = read_shape(args[2], &sample)) <= 0)
        return declined(taken);
    double p = PyFloat_AS_DOUBLE(args[1]);
    PyArray_Descr *boolean = PyArray_DescrFromType(NPY_BOOL);
    PyArrayObject *result = new_result(boolean, &sample, &cfg);
    Py_DECREF(boolean);
    if (result == NULL)
        return declined(PyErr_Occurred() ? -1 : 0);
    npy_bool *data = PyArray_DATA(result);
    FILL_RESULT(result, sample.size, fill_bernoulli_buffered(&k, &cfg, p, sample.size, data));
}

/* Keys in the form `k` came in: typed keys of its dtype, or raw keys as uint32 words (a
 * trailing dimension of 2). */
static PyArrayObject *new_keys(const key *k, const shape *keys)
{
    if (k->typed)
        return new_array(k->dtype, keys->ndim, keys->dims);
    npy_intp dims[NPY_MAXDIMS + 1];
    memcpy(dims, keys->dims, (size_t)keys->ndim * sizeof(npy_intp));
    dims[keys->ndim] = 2;
    PyArray_Descr *words = PyArray_DescrFromType(NPY_UINT32);
    PyArrayObject *result = new_array(words, keys->ndim + 1, dims);
    Py_DECREF(words);
    return result;
}

static int fill_split(const key *k, long flags, npy_intp count, uint32_t *out)
{
    if (flags & PARTITIONABLE)
        partitionable_keys(k->words[0], k->words[1], count, out);
    else
        sequential_words(k->words[0], k->words[1], 2 * count, out);
    return 1;
}

PyDoc_STRVAR(split_doc, "split(key, shape, state) -> keys or None");

static PyObject *split(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    config cfg;
    key k;
    shape keys;
    int taken;
    if (check_arguments("split", nargs, 3) < 0 || read_config(args[2], &cfg) < 0)
        return NULL;
    if ((taken = read_key(args[0], &cfg, &k)) <= 0 || (taken = read_shape(args[1], &keys)) <= 0)
        return declined(taken);
    if (keys.size * 8 > cfg.max_bytes)
        return declined(0);
    PyArrayObject *result = new_keys(&k, &keys);
    if (result == NULL)
        return NULL;
    uint32_t *data = PyArray_DATA(result);
    FILL_RESULT(result, keys.size, fill_split(&k, cfg.flags, keys.size, data));
}

PyDoc_STRVAR(fold_in_doc, "fold_in(key, data, state) -> key or None");

static PyObject *fold_in(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    config cfg;
    key k;
    long long data;
    int taken;
    if (check_arguments("fold_in", nargs, 3) < 0 || read_config(args[2], &cfg) < 0)
        return NULL;
    if ((taken = read_key(args[0], &cfg, &k)) <= 0 || (taken = read_integer(args[1], &data)) <= 0)
        return declined(taken);
    if (data < 0 || data > (long long)UINT32_MAX)
        return declined(0);
    shape one = {.ndim = 0, .size = 1};
    PyArrayObject *result = new_keys(&k, &one);
    if (result == NULL)
        return NULL;
    uint32_t a = 0, b = (uint32_t)data;
    threefry_encrypt(k.words[0], k.words[1], &a, &b);
    uint32_t *words = PyArray_DATA(result);
    words[0] = a;
    words[1] = b;
    return (PyObject *)result;
}

#define METHOD(name) {#name, (PyCFunction)(void (*)(void))name, METH_FASTCALL, name##_doc}

static PyMethodDef sampling_methods[] = {
    METHOD(uniform), METHOD(bits),  METHOD(randint),
    METHOD(bernoulli), METHOD(split), METHOD(fold_in), {NULL, NULL, 0, NULL},
};

int accel_add_sampling(PyObject *module)
{
    return PyModule_AddFunctions(module, sampling_methods);
}
