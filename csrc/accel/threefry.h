/* The Threefry-2x32 block cipher (20 rounds), shared by threefry.c (the `threefry2x32`
 * primitive) and sampling.c (eager random draws).
 *
 * The rounds are written out, not looped over a table of rotations, so that each rotation is
 * a constant: a loop that encrypts many pairs with these inlined is then straight-line code
 * on 32-bit words, which GCC and Clang vectorize (four or eight pairs per instruction).
 */
#ifndef TRACEJIT_THREEFRY_H
#define TRACEJIT_THREEFRY_H

#include <stdint.h>

/* Loops over many pairs are compiled three times where the toolchain can choose between
 * versions at load time (GCC or Clang, x86-64 Linux): for AVX-512 (sixteen pairs per
 * instruction, and rotations in one), AVX2 (eight) and the baseline (SSE2, four); elsewhere
 * once, for the baseline. 10^6 pairs: 5.5, 1.7 and 0.6 ms. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
#define THREEFRY_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define THREEFRY_VECTOR_CLONES
#endif

#define THREEFRY_PARITY 0x1BD11BDAu

#define THREEFRY_ROUND(a, b, r)                                                              \
    do {                                                                                     \
        a += b;                                                                              \
        b = ((b << (r)) | (b >> (32 - (r)))) ^ a;                                            \
    } while (0)

/* Four rounds, then the injection of the key words k_a, k_b and the group's number. */
#define THREEFRY_GROUP(a, b, r0, r1, r2, r3, k_a, k_b, group)                                \
    do {                                                                                     \
        THREEFRY_ROUND(a, b, r0);                                                            \
        THREEFRY_ROUND(a, b, r1);                                                            \
        THREEFRY_ROUND(a, b, r2);                                                            \
        THREEFRY_ROUND(a, b, r3);                                                            \
        a += (k_a);                                                                          \
        b += (k_b) + (uint32_t)(group);                                                      \
    } while (0)

/* Encrypt the pair (*x1, *x2) in place under the key (key1, key2). */
static inline __attribute__((always_inline)) void
threefry_encrypt(uint32_t key1, uint32_t key2, uint32_t *x1, uint32_t *x2)
{
    const uint32_t key3 = key1 ^ key2 ^ THREEFRY_PARITY;
    uint32_t a = *x1 + key1, b = *x2 + key2;
    THREEFRY_GROUP(a, b, 13, 15, 26, 6, key2, key3, 1);
    THREEFRY_GROUP(a, b, 17, 29, 16, 24, key3, key1, 2);
    THREEFRY_GROUP(a, b, 13, 15, 26, 6, key1, key2, 3);
    THREEFRY_GROUP(a, b, 17, 29, 16, 24, key2, key3, 4);
    THREEFRY_GROUP(a, b, 13, 15, 26, 6, key3, key1, 5);
    *x1 = a;
    *x2 = b;
}

#endif
