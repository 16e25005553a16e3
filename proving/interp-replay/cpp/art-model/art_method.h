// Model of runtime/art_method.h (ART 14): IsNative() (the only member trace_hooks.h calls), plus
// the model's stand-in for the method's dex code: which way this run executes it, and its
// instructions (deopt_model.cc). ArtMethod objects are allocated below 4 GiB so that every entry
// is one slot (the checker maps records to slots one to one).
#ifndef HUBBLE_ART_MODEL_ART_METHOD_H_
#define HUBBLE_ART_MODEL_ART_METHOD_H_

#include <cstdint>
#include <vector>

namespace art {

// How the method runs in this scenario (ART decides per call; the model fixes it per method).
enum class ModelKind { kSwitch, kNterp, kCompiled, kNative };

// One model dex instruction (deopt_model.cc documents each).
struct ModelOp {
  char code;
  int target;  // callee id for calls, else -1
};

class ArtMethod {
 public:
  bool IsNative() const { return kind == ModelKind::kNative; }

  int id = 0;
  ModelKind kind = ModelKind::kSwitch;
  bool catches = false;  // a catch-all handler covers every instruction; it resumes at the next
  bool has_osr = false;  // the JIT has OSR code for it (jit.cc PrepareForOsr finds a header)
  std::vector<ModelOp> ops;
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_ART_METHOD_H_
