// Model of runtime/oat_quick_method_header.h (ART 14): only IsNterpMethodHeader() (line 45),
// true for nterp's one shared header and false for compiled code (AOT, JIT, OSR).
#ifndef HUBBLE_ART_MODEL_OAT_QUICK_METHOD_HEADER_H_
#define HUBBLE_ART_MODEL_OAT_QUICK_METHOD_HEADER_H_

namespace art {

class OatQuickMethodHeader {
 public:
  explicit constexpr OatQuickMethodHeader(bool nterp) : nterp_(nterp) {}
  bool IsNterpMethodHeader() const { return nterp_; }

 private:
  bool nterp_;
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_OAT_QUICK_METHOD_HEADER_H_
