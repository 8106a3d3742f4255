/* tapegrad's C kernels: fused loops the NumPy kernels in ops/rules/ spell as many passes.

Each kernel computes the same formula, in the same order of float operations, as its
NumPy twin, which stays the reference the tests compare against; only the libraries'
exp may differ in the last bit. Built at install (setup.py, optional: without a C
compiler tapegrad runs the NumPy kernels) and called through ctypes (_ckernels/__init__.py).

Build flags (setup.py): -ffp-contract=off keeps each multiply and add rounded as NumPy
rounds it (no fused multiply-add); no -ffast-math, which would drop NaN and inf handling
and, linked into a shared library, switch the whole process to flush-to-zero. */
#include <stddef.h>
#include <stdint.h>

/* glibc's vector math library (libmvec) has SIMD versions of expf; math.h declares them
   only under -ffast-math, so the declaration is here: the loop below then calls the
   16-lane (AVX-512) or 8-lane (AVX2) expf. */
#pragma omp declare simd notinbranch
float expf(float);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* one copy of each kernel per instruction set, chosen when the library loads */
#define TG_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TG_CLONES
#endif

typedef union { float f; uint32_t u; } tg_bits;

/* gelu (erf form) and its derivative for n float32 values: y = x Phi(x), d = Phi(x) + x phi(x).
   The NumPy twin is ops/rules/nn.py `_gelu_f32_numpy` (its comments derive the formula):
   Phi(-|x|) by Abramowitz & Stegun 7.1.26 in the scaled variable S t, its sign flipped by
   x's sign bit. k holds the float32 constants K, S K, C3, C2, C1, C0, 1/sqrt(2 pi). */
TG_CLONES
void tg_gelu_f32(const float *restrict x, float *restrict y, float *restrict d,
                 ptrdiff_t n, const float *restrict k) {
    const float K = k[0], SK = k[1], C3 = k[2], C2 = k[3], C1 = k[4], C0 = k[5];
    const float INV_SQRT_2PI = k[6];
    #pragma omp simd
    for (ptrdiff_t i = 0; i < n; i++) {
        float v = x[i];
        float t = SK / ((v < 0.0f ? -v : v) + K);      /* S t, t = 1 / (1 + p |x| / sqrt 2) */
        float e = expf((v * v) * -0.5f);               /* exp(-x^2 / 2) */
        float q = (t + C3) * t;                        /* Horner, monic in S t */
        q = (q + C2) * t;
        q = (q + C1) * t;
        q = (q + C0) * t;
        tg_bits h, s;
        h.f = q * e + 0.5f;                            /* 0.5 - Phi(-|x|) >= 0 (or nan) */
        s.f = v;
        h.u |= s.u & 0x80000000u;                      /* sign(x) (0.5 - Phi(-|x|)) */
        float c = h.f + 0.5f;                          /* Phi(x) */
        d[i] = (e * v) * INV_SQRT_2PI + c;             /* Phi(x) + x phi(x) */
        y[i] = c * v;                                  /* x Phi(x) */
    }
}
