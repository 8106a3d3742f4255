/* tapegrad's C kernels: fused loops the NumPy kernels in ops/rules/ spell as many passes.

Each kernel computes the same formula, in the same order of float operations, as its
NumPy twin, which stays the reference the tests compare against (tests/test_ckernels.py).
Two things may differ in the last bits: exp (glibc's vector expf and NumPy's round
differently, by an ulp) and row sums (a fixed order here, BLAS's order in NumPy).
Built at install (setup.py, optional: without a C compiler tapegrad runs the NumPy
kernels) and called through ctypes (_ckernels/__init__.py).

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

/* The SHA-256 of the kernels.c this library was built from (setup.py defines it): the
   loader compares it with the kernels.c beside it and refuses a stale library. */
#ifndef TG_SOURCE_SHA256
#define TG_SOURCE_SHA256 "unknown"
#endif
const char *tg_source_sha256(void) { return TG_SOURCE_SHA256; }

typedef union { float f; uint32_t u; } tg_bits;

/* Row sums in a fixed order, whatever the instruction set: 16 running sums (element i into
   sum i mod 16; the vector loop keeps them in one or two registers), added up pairwise
   (lane j + lane j+8, then j + j+4, ...: four dependent adds, not fifteen), then the tail
   one by one. The same bits on AVX-512, AVX2 and plain x86-64. */
#define TG_LANES 16

static inline float tg_lanes_sum(const float *acc) {
    float h[8], q[4];
    for (int j = 0; j < 8; j++)
        h[j] = acc[j] + acc[j + 8];
    for (int j = 0; j < 4; j++)
        q[j] = h[j] + h[j + 4];
    return (q[0] + q[2]) + (q[1] + q[3]);
}

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

/* Layer norm over rows of n: invstd = 1 / sqrt(mean((x - mean x)^2) + eps), xhat =
   (x - mean x) invstd, out = xhat w + b (w, b: NULL when absent; out may be xhat, when
   both are). The NumPy twin is ops/rules/nn.py `_ln_forward_numpy`: the same operations
   and roundings, its row sums in another order. */
TG_CLONES
void tg_layer_norm_f32(const float *restrict x, const float *restrict w,
                       const float *restrict b, float *out, float *xhat,
                       float *restrict invstd, ptrdiff_t rows, ptrdiff_t n, float count,
                       float eps) {
    for (ptrdiff_t r = 0; r < rows; r++) {
        const float *a = x + r * n;
        float *h = xhat + r * n, *o = out + r * n;
        float acc[TG_LANES] = {0};
        ptrdiff_t i = 0;
        for (; i + TG_LANES <= n; i += TG_LANES) {
            #pragma omp simd
            for (int j = 0; j < TG_LANES; j++)
                acc[j] += a[i + j];
        }
        float sum = tg_lanes_sum(acc);
        for (; i < n; i++)
            sum += a[i];
        const float mean = sum / count;
        float sq[TG_LANES] = {0};
        for (i = 0; i + TG_LANES <= n; i += TG_LANES) {
            #pragma omp simd
            for (int j = 0; j < TG_LANES; j++) {
                float c = a[i + j] - mean;
                h[i + j] = c;
                sq[j] += c * c;
            }
        }
        float sumsq = tg_lanes_sum(sq);
        for (; i < n; i++) {
            float c = a[i] - mean;
            h[i] = c;
            sumsq += c * c;
        }
        const float inv = 1.0f / __builtin_sqrtf(sumsq / count + eps);
        invstd[r] = inv;
        if (w && b) {
            #pragma omp simd
            for (ptrdiff_t k = 0; k < n; k++) {
                float v = h[k] * inv;
                h[k] = v;
                o[k] = v * w[k] + b[k];
            }
        } else if (w) {
            #pragma omp simd
            for (ptrdiff_t k = 0; k < n; k++) {
                float v = h[k] * inv;
                h[k] = v;
                o[k] = v * w[k];
            }
        } else if (b) {
            #pragma omp simd
            for (ptrdiff_t k = 0; k < n; k++) {
                float v = h[k] * inv;
                h[k] = v;
                o[k] = v + b[k];
            }
        } else {
            #pragma omp simd
            for (ptrdiff_t k = 0; k < n; k++)
                h[k] = h[k] * inv;
        }
    }
}

/* The norms' input gradient over rows of n (layer norm's trailing axes):
   dx = invstd (gx - mean(gx) - xhat sum(gx xhat) / dof), one row at a time, both sums in
   one read of the row. The NumPy twin is ops/rules/nn.py `_normalized_grad_numpy`: the
   same operations and roundings, its row sums (BLAS matrix-vector products) in another
   order. */
TG_CLONES
void tg_normalized_grad_f32(const float *restrict gx, const float *restrict xhat,
                            const float *restrict invstd, float *restrict dx,
                            ptrdiff_t rows, ptrdiff_t n, float count, float dof) {
    for (ptrdiff_t r = 0; r < rows; r++) {
        const float *g = gx + r * n, *h = xhat + r * n;
        float *o = dx + r * n;
        float sg[TG_LANES] = {0}, st[TG_LANES] = {0};
        ptrdiff_t i = 0;
        for (; i + TG_LANES <= n; i += TG_LANES) {
            #pragma omp simd
            for (int j = 0; j < TG_LANES; j++) {
                sg[j] += g[i + j];
                st[j] += g[i + j] * h[i + j];
            }
        }
        float sum_g = tg_lanes_sum(sg), sum_t = tg_lanes_sum(st);
        for (; i < n; i++) {
            sum_g += g[i];
            sum_t += g[i] * h[i];
        }
        const float m = sum_g / count, s = sum_t / dof, inv = invstd[r];
        #pragma omp simd
        for (ptrdiff_t k = 0; k < n; k++)
            o[k] = ((g[k] - m) - h[k] * s) * inv;
    }
}

/* Adam's moments and step over n float32 elements, in place, one pass:
   m <- m + w1 (g - m), v <- v beta2 + (g w2) g, upd <- (m neg_step) / (sqrt(v) / bc2_sqrt + eps)
   (w1 = 1 - beta1, w2 = 1 - beta2, neg_step = -lr / (1 - beta1^t), bc2_sqrt = sqrt(1 - beta2^t),
   each a float32 as NumPy casts the Python float). The NumPy twin is optim/_arrays.py
   `adam_moments_numpy`: the same operations in the same order, no sums, no exp: the same
   bits. */
TG_CLONES
void tg_adam_moments_f32(const float *restrict g, float *restrict m, float *restrict v,
                         float *restrict upd, ptrdiff_t n, float w1, float beta2, float w2,
                         float bc2_sqrt, float eps, float neg_step) {
    #pragma omp simd
    for (ptrdiff_t i = 0; i < n; i++) {
        const float gi = g[i];
        const float mi = m[i] + (gi - m[i]) * w1;
        const float vi = v[i] * beta2 + (gi * w2) * gi;
        m[i] = mi;
        v[i] = vi;
        upd[i] = (mi * neg_step) / (__builtin_sqrtf(vi) / bc2_sqrt + eps);
    }
}
