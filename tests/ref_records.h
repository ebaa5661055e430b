/* The records the reference sink's tests build (telemetry_sink.rs), shared by
 * the ports of those tests to the store and to the sink. */
#ifndef FDX_REF_RECORDS_H
#define FDX_REF_RECORDS_H

#include "fdx.h"

static const char *const ref_f16x3[] = {"F16", "F16", "F16"};

static inline fdx_impl ref_impl(const char *source)
{
    fdx_impl id = {"Cuda", "MatMul", ref_f16x3, 3, source, 0xabc};
    return id;
}

/* The reference's cpu_hw(): a stamp without compute capability. */
static inline fdx_hw ref_cpu_hw(void)
{
    fdx_hw hw = {0, 0, 0, "Intel(R) Core(TM) i9-14900K", "n/a"};
    return hw;
}

static inline fdx_miss ref_miss(const char *wanted, const char *fallback)
{
    fdx_miss m = {wanted, ref_impl(fallback), 1, ref_cpu_hw()};
    return m;
}

static inline fdx_dispatch ref_dispatch(const char *key, const char *chosen, const fdx_candidate *c,
                                        size_t n)
{
    fdx_dispatch d = {key, ref_impl(chosen), c, n, 1, ref_cpu_hw()};
    return d;
}

#endif
