// Model of runtime/mirror/object.h (ART 14): IdentityHashCode() (140-143), and the field reads
// task_hooks.h makes for an object known by a field (GetField64 507-511, GetFieldObject 280). ART
// computes the hash once and keeps it in the lock word (or the monitor); the model's object
// simply holds the value it answers, which the test chose, and counts the calls (a hash computed
// for an object the record does not name would be wasted work that can inflate a lock). Its
// fields: one of each kind, whatever the offset (the model publishes no field sources).
#ifndef HUBBLE_ART_MODEL_MIRROR_OBJECT_H_
#define HUBBLE_ART_MODEL_MIRROR_OBJECT_H_

#include <cstddef>
#include <cstdint>

namespace art {

// runtime/offsets.h: a field's byte offset in its object.
class MemberOffset {
 public:
  constexpr explicit MemberOffset(size_t value) : value_(value) {}
  constexpr uint32_t Uint32Value() const { return static_cast<uint32_t>(value_); }

 private:
  size_t value_;
};

namespace mirror {

class Object {
 public:
  explicit Object(int32_t hash) : hash_(hash) {}

  int32_t IdentityHashCode() {
    ++hash_calls;
    return hash_;
  }

  int64_t GetField64(MemberOffset) { return long_field; }

  template <typename T>
  T* GetFieldObject(MemberOffset) {
    return reference_field;
  }

  int hash_calls = 0;
  int64_t long_field = 0;
  Object* reference_field = nullptr;

 private:
  int32_t hash_;
};

}  // namespace mirror
}  // namespace art

#endif  // HUBBLE_ART_MODEL_MIRROR_OBJECT_H_
