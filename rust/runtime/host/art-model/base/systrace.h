// Model of libartbase/base/systrace.h 38-44: ATraceBegin/ATraceEnd, counted so that the tests can
// check the sections are paired (an unpaired end corrupts the app's systrace).
#ifndef HUBBLE_ART_MODEL_BASE_SYSTRACE_H_
#define HUBBLE_ART_MODEL_BASE_SYSTRACE_H_

#include <atomic>

namespace art {
namespace model {
extern std::atomic<int> gATraceDepth;
}  // namespace model

inline void ATraceBegin(const char*) { model::gATraceDepth.fetch_add(1); }
inline void ATraceEnd() { model::gATraceDepth.fetch_sub(1); }

}  // namespace art

#endif  // HUBBLE_ART_MODEL_BASE_SYSTRACE_H_
