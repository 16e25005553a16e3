// Model of runtime/interpreter/shadow_frame.h (ART 14) with patch 0020's flag: the frame flags
// (53-66, and kHubbleNoExitRecord = 1 << 6 from 0020), GetLink/SetLink (135-141), the dex pc
// (113-115, 130-133), CreateDeoptimizedFrame/DeleteDeoptimizedFrame (81-93), the constructor's
// frame_flags_(0) (414-424) and Get/UpdateFrameFlag (428-438); for task_hooks.h, NumberOfVRegs
// (103-105) and GetVRegReference (195-204: References()[i], with its DCHECK_LT; the read barrier
// and verification are no-ops here). The deopt model's frames have no vregs (its instructions
// have no operands); the task model's frames hold the references a call passed in their last
// registers, as ART's do. `invocation` and `osr_continuation` are the model's ground
// truth (which Java call this frame continues), not ART's.
#ifndef HUBBLE_ART_MODEL_INTERPRETER_SHADOW_FRAME_H_
#define HUBBLE_ART_MODEL_INTERPRETER_SHADOW_FRAME_H_

#include <cstdint>
#include <vector>

#include "art_method.h"
#include "base/macros.h"
#include "mirror/object.h"

namespace art {

struct ModelInvocation;

class ShadowFrame {
 private:
  enum class FrameFlags : uint32_t {
    kNotifyFramePop = 1 << 0,
    kForcePopFrame = 1 << 1,
    kForceRetryInst = 1 << 2,
    kSkipMethodExitEvents = 1 << 3,
    kSkipNextExceptionEvent = 1 << 4,
    kNotifyDexPcMoveEvents = 1 << 5,
    kHubbleNoExitRecord = 1 << 6,  // patch 0020
  };

 public:
  ShadowFrame(ArtMethod* method, uint32_t dex_pc) : method_(method), dex_pc_(dex_pc) {}
  ShadowFrame(ArtMethod* method, uint32_t dex_pc, uint32_t number_of_vregs)
      : references_(number_of_vregs, nullptr), method_(method), dex_pc_(dex_pc) {}

  uint32_t NumberOfVRegs() const { return static_cast<uint32_t>(references_.size()); }
  mirror::Object* GetVRegReference(size_t i) const {
    DCHECK(i < NumberOfVRegs());
    return references_[i];
  }
  void SetVRegReference(size_t i, mirror::Object* ref) {
    DCHECK(i < NumberOfVRegs());
    references_[i] = ref;
  }

  static ShadowFrame* CreateDeoptimizedFrame(ArtMethod* method, uint32_t dex_pc) {
    return new ShadowFrame(method, dex_pc);
  }
  static void DeleteDeoptimizedFrame(ShadowFrame* sf) { delete sf; }

  uint32_t GetDexPC() const { return dex_pc_; }
  void SetDexPC(uint32_t dex_pc) { dex_pc_ = dex_pc; }
  ShadowFrame* GetLink() const { return link_; }
  void SetLink(ShadowFrame* frame) {
    DCHECK(this != frame);
    link_ = frame;
  }
  ArtMethod* GetMethod() const { return method_; }

  bool GetForceRetryInstruction() const { return GetFrameFlag(FrameFlags::kForceRetryInst); }

  // Patch 0020 (shadow_frame.h).
  bool GetHubbleNoExitRecord() const { return GetFrameFlag(FrameFlags::kHubbleNoExitRecord); }
  void SetHubbleNoExitRecord(bool enable) {
    UpdateFrameFlag(enable, FrameFlags::kHubbleNoExitRecord);
  }

  ModelInvocation* invocation = nullptr;
  bool osr_continuation = false;  // rebuilt from OSR code: the invocation's frame is another one

 private:
  void UpdateFrameFlag(bool enable, FrameFlags flag) {
    if (enable) {
      frame_flags_ |= static_cast<uint32_t>(flag);
    } else {
      frame_flags_ &= ~static_cast<uint32_t>(flag);
    }
  }
  bool GetFrameFlag(FrameFlags flag) const {
    return (frame_flags_ & static_cast<uint32_t>(flag)) != 0;
  }

  std::vector<mirror::Object*> references_;
  ShadowFrame* link_ = nullptr;
  ArtMethod* method_;
  uint32_t dex_pc_;
  uint32_t frame_flags_ = 0;
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_INTERPRETER_SHADOW_FRAME_H_
