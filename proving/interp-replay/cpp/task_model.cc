// Host model of the switch interpreter entering a method while task records are on,
// driving Hubble's REAL task hook (art-patches/files/runtime/hubble/task_hooks.h and
// task_methods.h, compiled unchanged against the stand-ins of cpp/art-model/) at the place patch
// 0028 puts it, for tests/tasks.rs.
//
// What is modelled, from art/ at android-14.0.0_r15:
//  * the table as tasks.cc publishes it: InstallTaskRecords resolves the rows a build has and
//    Record appends each with AppendTaskMethod (the model's "publish" names the rows found;
//    resolution itself needs ART's class linker and is not here);
//  * a call into the interpreter as ART builds its frame: interpreter.cc Execute() gets a
//    ShadowFrame whose last InsSize() registers hold the arguments, the receiver first
//    (artQuickToInterpreterBridge / ArtInterpreterToInterpreterBridge copy them there; see
//    shadow_frame.h's model), and, entering the method (not resuming a deoptimized frame), runs
//    the two lines marked `// HOOK <patch>` below, which tests/tasks.rs holds against the series.
//
// stdin:  "publish <row> ..." once (rows of kTaskMethods this build has, in the order found),
//         then per call "call <row | x> <registers> <ins> [<vreg>=<hash hex | null> ...]":
//         the method of that row (x: a method not in the table) entered with a frame of
//         <registers> vregs, of which the last <ins> are ins; the listed vregs hold objects.
//         "find <descriptor> [<superclass descriptor> ...] <name> <signature>" asks what the
//         compiler's inliner asks (tasks.cc WritesTaskRecord, from the method's declaring class
//         and its superclasses, name and signature) and prints "F <row or -1>".
// stdout: "M <row | x> <ArtMethod* hex>", then "hashes <calls of IdentityHashCode>", "cursor
//         <byte offset>" and every ring slot in hex.
#include <sys/mman.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/hubble/task_hooks.h"

namespace art {

// Model of libdexfile/dex/code_item_accessors.h's CodeItemDataAccessor: InsSize(), the only
// member patch 0028's line reads.
class CodeItemDataAccessor {
 public:
  explicit CodeItemDataAccessor(uint16_t ins_size) : ins_size_(ins_size) {}
  uint16_t InsSize() const { return ins_size_; }

 private:
  uint16_t ins_size_;
};

namespace {

// interpreter.cc Execute(), entering a method, from patch 0020's and 0028's lines: the entry
// record, then the task record.
void EnterInterpreted(Thread* self, const CodeItemDataAccessor& accessor, ShadowFrame& shadow_frame,
                      ArtMethod* method) {
  hubble::TraceEntry(self, method);  // HOOK 0020
  hubble::TraceTaskOnEntry(self, shadow_frame, accessor.InsSize());  // HOOK 0028
}

int Main() {
  namespace tp = hubble::tp;
  const size_t slots = 1 << 12;
  void* ring = mmap(nullptr, slots * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  static Thread thread;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ring);
  uintptr_t* block = hubble::BlockOf(&thread);
  block[tp::kBegin] = begin;
  block[tp::kEnd] = begin + slots * 8;
  block[tp::kLimit] = block[tp::kEnd] - 8;
  tp::WriteSlot(begin, tp::Pack(0, tp::kMarkStart));
  block[tp::kCursor] = begin + 8;

  // One ArtMethod per row, and one that is not in the table.
  std::vector<std::unique_ptr<ArtMethod>> methods;
  for (size_t row = 0; row <= hubble::kNumTaskMethods; ++row) {
    methods.push_back(std::make_unique<ArtMethod>());
    methods.back()->id = static_cast<int>(row);
    if (row < hubble::kNumTaskMethods) {
      printf("M %zu %" PRIxPTR "\n", row, reinterpret_cast<uintptr_t>(methods.back().get()));
    } else {
      printf("M x %" PRIxPTR "\n", reinterpret_cast<uintptr_t>(methods.back().get()));
    }
  }
  std::vector<std::unique_ptr<mirror::Object>> objects;

  char line[4096];
  while (fgets(line, sizeof(line), stdin) != nullptr) {
    char* save = nullptr;
    char* tok = strtok_r(line, " \t\n", &save);
    if (tok == nullptr) continue;
    if (strcmp(tok, "publish") == 0) {
      while ((tok = strtok_r(nullptr, " \t\n", &save)) != nullptr) {
        const size_t row = strtoul(tok, nullptr, 10);
        if (row >= hubble::kNumTaskMethods ||
            !hubble::AppendTaskMethod(methods[row].get(), static_cast<int>(row),
                                      {hubble::kHashSource, hubble::kHashSource})) {
          return 3;
        }
      }
      continue;
    }
    if (strcmp(tok, "find") == 0) {
      const char* descriptor = strtok_r(nullptr, " \t\n", &save);
      std::vector<std::string> supers;  // the declaring class's superclasses, nearest first
      const char* tok2;
      while ((tok2 = strtok_r(nullptr, " \t\n", &save)) != nullptr && tok2[0] == 'L') {
        supers.emplace_back(tok2);
      }
      const char* name = tok2;
      const char* signature = strtok_r(nullptr, " \t\n", &save);
      if (descriptor == nullptr || name == nullptr || signature == nullptr) return 3;
      // tasks.cc WritesTaskRecord: the name first, then the whole key; Extends walks the
      // declaring class's superclasses.
      auto extends = [&supers](std::string_view base) {
        for (const std::string& s : supers) {
          if (s == base) return true;
        }
        return false;
      };
      printf("F %d\n", hubble::IsTaskMethodName(name)
                           ? hubble::FindTaskMethod(descriptor, name, signature, extends)
                           : -1);
      continue;
    }
    if (strcmp(tok, "call") != 0) {
      fprintf(stderr, "bad line: %s\n", tok);
      return 3;
    }
    const char* which = strtok_r(nullptr, " \t\n", &save);
    const char* registers = strtok_r(nullptr, " \t\n", &save);
    const char* ins = strtok_r(nullptr, " \t\n", &save);
    if (which == nullptr || registers == nullptr || ins == nullptr) return 3;
    const size_t row = which[0] == 'x' ? hubble::kNumTaskMethods : strtoul(which, nullptr, 10);
    if (row > hubble::kNumTaskMethods) return 3;
    ArtMethod* method = methods[row].get();
    ShadowFrame frame(method, 0, static_cast<uint32_t>(strtoul(registers, nullptr, 10)));
    const CodeItemDataAccessor accessor(static_cast<uint16_t>(strtoul(ins, nullptr, 10)));
    if (accessor.InsSize() > frame.NumberOfVRegs()) return 3;
    while ((tok = strtok_r(nullptr, " \t\n", &save)) != nullptr) {
      char* eq = strchr(tok, '=');
      if (eq == nullptr) return 3;
      *eq = '\0';
      const size_t vreg = strtoul(tok, nullptr, 10);
      if (vreg >= frame.NumberOfVRegs()) return 3;
      if (strcmp(eq + 1, "null") == 0) {
        frame.SetVRegReference(vreg, nullptr);
      } else {
        objects.push_back(std::make_unique<mirror::Object>(
            static_cast<int32_t>(strtoul(eq + 1, nullptr, 16))));
        frame.SetVRegReference(vreg, objects.back().get());
      }
    }
    EnterInterpreted(&thread, accessor, frame, method);
  }
  int hashes = 0;
  for (const auto& o : objects) hashes += o->hash_calls;
  printf("hashes %d\n", hashes);
  printf("cursor %" PRIuPTR "\n", block[tp::kCursor] - begin);
  const uint64_t* s = static_cast<const uint64_t*>(ring);
  const size_t used = (block[tp::kCursor] - begin) / 8;
  for (size_t i = 0; i < used; ++i) printf("%016" PRIx64 "\n", s[i]);
  return 0;
}

}  // namespace
}  // namespace art

int main() { return art::Main(); }
