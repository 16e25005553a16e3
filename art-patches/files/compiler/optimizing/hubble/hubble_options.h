/*
 * Hubble for AOSP: the build-time switch of method tracing in compiled code.
 *
 *   ART_USE_HUBBLE=0   the instruction builder inserts no trace points: compiled code is
 *                      byte-for-byte what it is without Hubble (the IR nodes and emitters still
 *                      build, so the switch cannot rot).
 *   ART_USE_HUBBLE=1   (default) every method compiled on its own gets HTraceEntry/HTraceExit.
 *
 * Set it with -DART_USE_HUBBLE=0 (Android.bp cflags, or the host build's CXXFLAGS).
 */
#ifndef ART_COMPILER_OPTIMIZING_HUBBLE_HUBBLE_OPTIONS_H_
#define ART_COMPILER_OPTIMIZING_HUBBLE_HUBBLE_OPTIONS_H_

#ifndef ART_USE_HUBBLE
#define ART_USE_HUBBLE 1
#endif

namespace art {
namespace hubble {

static constexpr bool kUseHubble = ART_USE_HUBBLE != 0;

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_OPTIMIZING_HUBBLE_HUBBLE_OPTIONS_H_
