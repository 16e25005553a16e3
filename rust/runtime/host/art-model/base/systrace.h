// Model of libartbase/base/systrace.h 38-44: ATraceBegin/ATraceEnd, counted so that the tests can
// check the sections are paired (an unpaired end corrupts the app's systrace). Per thread, as
// atrace sections are: a section ends on the thread that began it, and the tests of one binary
// run on several threads at once (a process-wide count let one test see another's open section).
#ifndef HUBBLE_ART_MODEL_BASE_SYSTRACE_H_
#define HUBBLE_ART_MODEL_BASE_SYSTRACE_H_

namespace art {
namespace model {
extern thread_local int gATraceDepth;
}  // namespace model

inline void ATraceBegin(const char*) { ++model::gATraceDepth; }
inline void ATraceEnd() { --model::gATraceDepth; }

}  // namespace art

#endif  // HUBBLE_ART_MODEL_BASE_SYSTRACE_H_
