// Model of libartbase/base/macros.h (ART 14): the attribute macros trace_hooks.h uses, plus
// DCHECK (libartbase/base/logging.h) as an always-on check, as in a debug build.
#ifndef HUBBLE_ART_MODEL_BASE_MACROS_H_
#define HUBBLE_ART_MODEL_BASE_MACROS_H_

#include <cstdio>
#include <cstdlib>

#define ALWAYS_INLINE __attribute__((always_inline))
#define LIKELY(x) __builtin_expect(!!(x), true)
#define UNLIKELY(x) __builtin_expect(!!(x), false)
#define REQUIRES_SHARED(...)

#define DCHECK(x)                                                                   \
  do {                                                                              \
    if (!(x)) {                                                                     \
      fprintf(stderr, "%s:%d: DCHECK failed: %s\n", __FILE__, __LINE__, #x);        \
      abort();                                                                      \
    }                                                                               \
  } while (0)

#endif  // HUBBLE_ART_MODEL_BASE_MACROS_H_
