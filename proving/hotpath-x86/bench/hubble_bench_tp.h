/* Hubble for AOSP: LTTng-UST tracepoint provider of scripts/hotpath-bench (variant h): a method
 * entry and exit event carrying the ArtMethod*, as a tracer built on LTTng would record them. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER hubble_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./hubble_bench_tp.h"

#if !defined(HUBBLE_BENCH_TP_H_) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HUBBLE_BENCH_TP_H_

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(hubble_bench, entry,
    LTTNG_UST_TP_ARGS(uint64_t, method),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint64_t, method, method)))

LTTNG_UST_TRACEPOINT_EVENT(hubble_bench, exit,
    LTTNG_UST_TP_ARGS(uint64_t, method),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint64_t, method, method)))

#endif

#include <lttng/tracepoint-event.h>
