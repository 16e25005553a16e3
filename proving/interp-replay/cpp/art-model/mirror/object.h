// Model of runtime/mirror/object.h (ART 14): IdentityHashCode() (140-143), the only member
// task_hooks.h calls. ART computes the hash once and keeps it in the lock word (or the monitor);
// the model's object simply holds the value it answers, which the test chose, and counts the
// calls (a hash computed for an object the record does not name would be wasted work that can
// inflate a lock).
#ifndef HUBBLE_ART_MODEL_MIRROR_OBJECT_H_
#define HUBBLE_ART_MODEL_MIRROR_OBJECT_H_

#include <cstdint>

namespace art {
namespace mirror {

class Object {
 public:
  explicit Object(int32_t hash) : hash_(hash) {}

  int32_t IdentityHashCode() {
    ++hash_calls;
    return hash_;
  }

  int hash_calls = 0;

 private:
  int32_t hash_;
};

}  // namespace mirror
}  // namespace art

#endif  // HUBBLE_ART_MODEL_MIRROR_OBJECT_H_
