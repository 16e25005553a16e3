/*
 * hubble-compile-method: ART's optimizing compiler (the patched tree, libart-compiler's objects)
 * compiles one method of a real .dex file for arm64, thumb2, x86_64 and x86, the way
 * OptimizingCompiler::TryCompile does (compiler/optimizing/optimizing_compiler.cc), without a
 * Runtime. Written in the style of ART's own OptimizingUnitTest / codegen tests
 * (optimizing_unit_test.h CreateCFG, codegen_test_utils.h RunCode): null class loader and dex
 * cache handles, no class linker, no VerifiedMethod. Where it differs from dex2oat/JIT, the
 * comment says so (docs/compiler-harness.md lists them all).
 *
 *   hubble-compile-method DEX 'LFoo;->bar(II)I' OUT [--isa arm64,thumb2,x86_64,x86] [--no-trace]
 *   hubble-compile-method DEX --all OUTDIR      every method it can build (index.txt)
 *   hubble-compile-method DEX --classes OUT     the classes, for the executor's class linker
 *
 * OUT is a text file (format in proving/art-compile/src/output.rs): per ISA, the code
 * bytes, the CodeInfo (stack map) bytes, frame size and spill masks, and the code intervals of
 * every HTraceEntry/HTraceExit the code generator emitted (inline part and out-of-line slow
 * path), taken from the code generator's own DisassemblyInformation, in graph order.
 * Exit status: 0 compiled; 2 bad input (no such file/method, dex fails to parse or verify);
 * 3 the compiler refused the method (the reason is printed).
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "arch/instruction_set_features.h"
#include "base/arena_allocator.h"
#include "base/malloc_arena_pool.h"
#include "base/mem_map.h"
#include "base/scoped_arena_allocator.h"
#include "dex/art_dex_file_loader.h"
#include "dex/class_accessor-inl.h"
#include "dex/code_item_accessors-inl.h"
#include "dex/dex_file.h"
#include "dex/dex_instruction-inl.h"
#include "dex/dex_file_annotations.h"
#include "dex/dex_file_exception_helpers.h"
#include "driver/compiler_options.h"
#include "driver/dex_compilation_unit.h"
#include "base/locks.h"
#include "entrypoints/quick/quick_entrypoints_enum.h"
#include "entrypoints/quick/quick_entrypoints_list.h"  // QUICK_ENTRYPOINT_LIST, again
#include "handle.h"
#include "jni/jni_env_ext.h"
#include "jni/quick/jni_compiler.h"
#include "linker/linker_patch.h"
#include "stack_reference.h"
#include "optimizing/builder.h"
#include "optimizing/code_generator.h"
#include "optimizing/graph_visualizer.h"
#include "optimizing/nodes.h"
#include "optimizing/optimization.h"
#include "optimizing/prepare_for_register_allocation.h"
#include "optimizing/register_allocator.h"
#include "optimizing/ssa_liveness_analysis.h"
#include "optimizing/write_barrier_elimination.h"
#include "gc/heap.h"
#include "runtime.h"
#include "stack_map.h"
#include "thread.h"

namespace art {

// CompilerOptions' fields are private; ART's tests set them through this friend class
// (compiler/common_compiler_test.cc, CommonCompilerTestImpl::CreateCompilerOptions), which is
// not part of libart-compiler. This is that function, line for line.
class CommonCompilerTestImpl {
 public:
  static std::unique_ptr<CompilerOptions> CreateCompilerOptions(InstructionSet instruction_set,
                                                                const std::string& variant) {
    std::unique_ptr<CompilerOptions> compiler_options = std::make_unique<CompilerOptions>();
    compiler_options->instruction_set_ = instruction_set;
    std::string error_msg;
    compiler_options->instruction_set_features_ =
        InstructionSetFeatures::FromVariant(instruction_set, variant, &error_msg);
    CHECK(compiler_options->instruction_set_features_ != nullptr) << error_msg;
    return compiler_options;
  }
};

// The compiler looks at classes only with the mutator lock held: `ScopedObjectAccess
// soa(Thread::Current())` in reference_type_propagation.cc, instruction_builder.cc,
// instruction_simplifier.cc and more, as dex2oat's and the JIT's compiler threads do (they are
// attached Threads). Typing an instance method's `this`, a reference parameter or an unresolved
// field's value goes through those. So the harness's one thread is such a Thread, made the way
// Runtime::Init makes one before any other (Locks::Init, Thread::Startup: runtime.cc) and by
// libart's own constructor (thread.cc 2456-2487), then made current (Thread::Init does that:
// InitTid, self_tls_). Thread's constructor reads Runtime::Current()->GetHeap() once (ResetTlab,
// thread.cc 4592-4594: is the heap sampler on?), so a Runtime made by libart's constructor
// (runtime.cc 240) with zeroed storage for its heap (HeapSampler::enabled_ false) is installed
// for that call only: afterwards Runtime::Current() is null again, so the compiler takes no path
// that a Runtime would choose (IsAotCompiler, the JIT's code cache, boot image spaces).
// thread.h and runtime.h name StubTest and Dex2oatImageTest as friends for ART's own tests;
// this program is not linked into libart, and nothing else defines them here.
class StubTest {
 public:
  static Thread* NewThread() { return new Thread(/*daemon=*/false); }
  static void MakeCurrent(Thread* self) {
    Thread::self_tls_ = self;
    self->InitTid();
  }
};

class Dex2oatImageTest {
 public:
  static void AttachCompilerThread() {
    Locks::Init();
    Thread::Startup();
    Runtime* runtime = new Runtime();
    runtime->heap_ = static_cast<gc::Heap*>(calloc(1, sizeof(gc::Heap)));
    Runtime::instance_ = runtime;
    Thread* self = StubTest::NewThread();
    Runtime::instance_ = nullptr;
    StubTest::MakeCurrent(self);
    CHECK(Thread::Current() == self);
  }
};

namespace {

// HandleCache (nodes.h) creates its class-root handles on first use through the class linker
// (HandleCache::CreateRootHandle, nodes.cc), which needs a Runtime. The roots the harness's
// corpus reaches are java.lang.Object's, for HNullConstant (HGraph::GetNullConstant: every
// HTraceExit of a void method returns the null constant) and the inexact type of every
// unresolved reference, and java.lang.Throwable's, the type of the exception a catch-all
// handler's move-exception loads (RTPVisitor::VisitLoadException). The stand-ins: zeroed
// objects below 4 GiB (compressed references) as those classes: not primitive, Object with no
// superclass (so Class::IsObjectClass() is true, as for the real one), Throwable with Object as
// its superclass (mirror::Class::SuperClassOffset), so that IsAssignableFrom and
// GetCommonSuperClass answer as they would for the real pair. The cache's members are private;
// this is the standard explicit-instantiation access to them (no layout assumed).
template <typename Tag, typename Tag::type kMember>
struct HubbleMemberAccess {
  friend typename Tag::type HubbleMember(Tag) { return kMember; }
};
struct HandleCacheObjectClass {
  using type = ReferenceTypeInfo::TypeHandle HandleCache::*;
  friend type HubbleMember(HandleCacheObjectClass);
};
template struct HubbleMemberAccess<HandleCacheObjectClass, &HandleCache::object_class_handle_>;
struct HandleCacheThrowableClass {
  using type = ReferenceTypeInfo::TypeHandle HandleCache::*;
  friend type HubbleMember(HandleCacheThrowableClass);
};
template struct HubbleMemberAccess<HandleCacheThrowableClass,
                                   &HandleCache::throwable_class_handle_>;

// Handle's constructor from a raw reference slot is protected (HandleScope makes handles).
struct StandInClassHandle : ReferenceTypeInfo::TypeHandle {
  explicit StandInClassHandle(StackReference<mirror::Object>* slot)
      : ReferenceTypeInfo::TypeHandle(slot) {}
};

void InstallClassRootStandIns(HGraph* graph) {
  // One page below 4 GiB: Object's class at its start, Throwable's in its second half.
  static uint8_t* page = [] {
    void* p = mmap(nullptr, kPageSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    CHECK(p != MAP_FAILED);
    return static_cast<uint8_t*>(p);
  }();
  static StackReference<mirror::Object>* object_slot = [] {
    auto* ref = new StackReference<mirror::Object>();
    ref->Assign(reinterpret_cast<mirror::Object*>(page));
    return ref;
  }();
  static StackReference<mirror::Object>* throwable_slot = [] {
    uint8_t* throwable = page + kPageSize / 2;
    static_assert(kPageSize / 2 >= sizeof(mirror::Class));
    // super_class_ is a HeapReference<Class>: the compressed (32-bit) address of Object's.
    const uint32_t object_ref = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(page));
    memcpy(throwable + mirror::Class::SuperClassOffset().Uint32Value(), &object_ref,
           sizeof(object_ref));
    auto* ref = new StackReference<mirror::Object>();
    ref->Assign(reinterpret_cast<mirror::Object*>(throwable));
    return ref;
  }();
  HandleCache* cache = graph->GetHandleCache();
  cache->*HubbleMember(HandleCacheObjectClass()) = StandInClassHandle(object_slot);
  cache->*HubbleMember(HandleCacheThrowableClass()) = StandInClassHandle(throwable_slot);
}

// codegen_test_utils.h InternalCodeAllocator.
class HarnessCodeAllocator : public CodeAllocator {
 public:
  uint8_t* Allocate(size_t size) override {
    memory_.resize(size);
    return memory_.data();
  }
  ArrayRef<const uint8_t> GetMemory() const override { return ArrayRef<const uint8_t>(memory_); }

 private:
  std::vector<uint8_t> memory_;
};

std::string Hex(ArrayRef<const uint8_t> bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

// OptimizingCompiler::RunOptimizations (private there): the same pass-by-pass loop.
void RunPasses(HGraph* graph,
               CodeGenerator* codegen,
               const DexCompilationUnit& unit,
               const OptimizationDef definitions[],
               size_t length) {
  ArenaVector<HOptimization*> optimizations = ConstructOptimizations(
      definitions, length, graph->GetAllocator(), graph, /*stats=*/nullptr, codegen, unit);
  std::bitset<static_cast<size_t>(OptimizationPass::kLast) + 1u> pass_changes;
  pass_changes[static_cast<size_t>(OptimizationPass::kNone)] = true;
  for (size_t i = 0; i < length; ++i) {
    if (pass_changes[static_cast<size_t>(definitions[i].depends_on)]) {
      pass_changes[static_cast<size_t>(definitions[i].pass)] = optimizations[i]->Run();
    } else {
      pass_changes[static_cast<size_t>(definitions[i].pass)] = false;
    }
  }
}

// OptimizingCompiler::RunOptimizations's list (no --passes), then RunArchOptimizations'.
void RunOptimizations(HGraph* graph, CodeGenerator* codegen, const DexCompilationUnit& unit) {
  const OptimizationDef optimizations[] = {
      OptDef(OptimizationPass::kConstantFolding),
      OptDef(OptimizationPass::kInstructionSimplifier),
      OptDef(OptimizationPass::kDeadCodeElimination, "dead_code_elimination$initial"),
      OptDef(OptimizationPass::kInliner),
      OptDef(OptimizationPass::kConstantFolding,
             "constant_folding$after_inlining",
             OptimizationPass::kInliner),
      OptDef(OptimizationPass::kInstructionSimplifier,
             "instruction_simplifier$after_inlining",
             OptimizationPass::kInliner),
      OptDef(OptimizationPass::kDeadCodeElimination,
             "dead_code_elimination$after_inlining",
             OptimizationPass::kInliner),
      OptDef(OptimizationPass::kSideEffectsAnalysis, "side_effects$before_gvn"),
      OptDef(OptimizationPass::kGlobalValueNumbering),
      OptDef(OptimizationPass::kSelectGenerator),
      OptDef(OptimizationPass::kAggressiveConstantFolding, "constant_folding$after_gvn"),
      OptDef(OptimizationPass::kInstructionSimplifier, "instruction_simplifier$after_gvn"),
      OptDef(OptimizationPass::kDeadCodeElimination, "dead_code_elimination$after_gvn"),
      OptDef(OptimizationPass::kSideEffectsAnalysis, "side_effects$before_licm"),
      OptDef(OptimizationPass::kInvariantCodeMotion),
      OptDef(OptimizationPass::kInductionVarAnalysis),
      OptDef(OptimizationPass::kBoundsCheckElimination),
      OptDef(OptimizationPass::kLoopOptimization),
      OptDef(OptimizationPass::kConstantFolding, "constant_folding$after_loop_opt"),
      OptDef(OptimizationPass::kAggressiveInstructionSimplifier,
             "instruction_simplifier$after_loop_opt"),
      OptDef(OptimizationPass::kDeadCodeElimination, "dead_code_elimination$after_loop_opt"),
      OptDef(OptimizationPass::kLoadStoreElimination),
      OptDef(OptimizationPass::kCHAGuardOptimization),
      OptDef(OptimizationPass::kCodeSinking),
      OptDef(OptimizationPass::kConstantFolding, "constant_folding$before_codegen"),
      OptDef(OptimizationPass::kAggressiveInstructionSimplifier,
             "instruction_simplifier$before_codegen"),
      OptDef(OptimizationPass::kDeadCodeElimination, "dead_code_elimination$before_codegen"),
      OptDef(OptimizationPass::kConstructorFenceRedundancyElimination)};
  RunPasses(graph, codegen, unit, optimizations, arraysize(optimizations));

  switch (codegen->GetInstructionSet()) {
    case InstructionSet::kThumb2: {
      const OptimizationDef arm[] = {
          OptDef(OptimizationPass::kInstructionSimplifierArm),
          OptDef(OptimizationPass::kSideEffectsAnalysis),
          OptDef(OptimizationPass::kGlobalValueNumbering, "GVN$after_arch"),
          OptDef(OptimizationPass::kCriticalNativeAbiFixupArm),
          OptDef(OptimizationPass::kScheduling)};
      RunPasses(graph, codegen, unit, arm, arraysize(arm));
      break;
    }
    case InstructionSet::kArm64: {
      const OptimizationDef arm64[] = {
          OptDef(OptimizationPass::kInstructionSimplifierArm64),
          OptDef(OptimizationPass::kSideEffectsAnalysis),
          OptDef(OptimizationPass::kGlobalValueNumbering, "GVN$after_arch"),
          OptDef(OptimizationPass::kScheduling)};
      RunPasses(graph, codegen, unit, arm64, arraysize(arm64));
      break;
    }
    case InstructionSet::kX86: {
      // optimizing_compiler.cc:540-547 (ART 14, RunArchOptimizations, case kX86): the
      // PC-relative fixups give constant-area loads, packed switches and .bss/literal loads a
      // HX86ComputeBaseMethodAddress (call/pop: x86 has no PC-relative addressing).
      const OptimizationDef x86[] = {
          OptDef(OptimizationPass::kInstructionSimplifierX86),
          OptDef(OptimizationPass::kSideEffectsAnalysis),
          OptDef(OptimizationPass::kGlobalValueNumbering, "GVN$after_arch"),
          OptDef(OptimizationPass::kPcRelativeFixupsX86),
          OptDef(OptimizationPass::kX86MemoryOperandGeneration)};
      RunPasses(graph, codegen, unit, x86, arraysize(x86));
      break;
    }
    case InstructionSet::kX86_64: {
      const OptimizationDef x86_64[] = {
          OptDef(OptimizationPass::kInstructionSimplifierX86_64),
          OptDef(OptimizationPass::kSideEffectsAnalysis),
          OptDef(OptimizationPass::kGlobalValueNumbering, "GVN$after_arch"),
          OptDef(OptimizationPass::kX86MemoryOperandGeneration)};
      RunPasses(graph, codegen, unit, x86_64, arraysize(x86_64));
      break;
    }
    default:
      LOG(FATAL) << "unsupported ISA " << codegen->GetInstructionSet();
  }
}

// optimizing_compiler.cc AllocateRegisters (file-local there).
void AllocateRegisters(HGraph* graph, CodeGenerator* codegen) {
  PrepareForRegisterAllocation(graph, codegen->GetCompilerOptions(), /*stats=*/nullptr).Run();
  ScopedArenaAllocator local_allocator(graph->GetArenaStack());
  SsaLivenessAnalysis liveness(graph, codegen, &local_allocator);
  liveness.Analyze();
  std::unique_ptr<RegisterAllocator> register_allocator = RegisterAllocator::Create(
      &local_allocator,
      codegen,
      liveness,
      codegen->GetCompilerOptions().GetRegisterAllocationStrategy());
  register_allocator->AllocateRegisters();
}

// "Tracing compiled out" control: the nodes the patched builder inserted, removed before any
// pass runs. ART_USE_HUBBLE=0 never creates them; the graph is otherwise the same (HTraceEntry's
// only input is the current method, HTraceExit's the returned value; neither has users).
size_t RemoveTraceNodes(HGraph* graph) {
  size_t removed = 0;
  for (HBasicBlock* block : graph->GetReversePostOrder()) {
    for (HInstructionIterator it(block->GetInstructions()); !it.Done(); it.Advance()) {
      HInstruction* insn = it.Current();
      if (insn->IsTraceEntry() || insn->IsTraceExit()) {
        block->RemoveInstruction(insn);
        ++removed;
      }
    }
  }
  return removed;
}

struct Target {
  const char* name;
  InstructionSet isa;
};

constexpr Target kTargets[] = {
    {"arm64", InstructionSet::kArm64},
    {"thumb2", InstructionSet::kThumb2},
    {"x86_64", InstructionSet::kX86_64},
    {"x86", InstructionSet::kX86},
};

// The target `name` names, or nullptr for an unknown ISA (said on stderr, with the ones the
// caller knows).
const Target* TargetNamed(const std::string& name, const char* known) {
  for (const Target& t : kTargets) {
    if (name == t.name) return &t;
  }
  fprintf(stderr, "unknown ISA '%s' (%s)\n", name.c_str(), known);
  return nullptr;
}

const char* AnalysisName(GraphAnalysisResult r) {
  switch (r) {
    case kAnalysisSkipped: return "skipped (huge or large branchless method)";
    case kAnalysisInvalidBytecode: return "invalid bytecode";
    case kAnalysisFailThrowCatchLoop: return "throw/catch loop";
    case kAnalysisFailAmbiguousArrayOp: return "ambiguous array op";
    case kAnalysisFailIrreducibleLoopAndStringInit: return "irreducible loop and String.<init>";
    case kAnalysisFailPhiEquivalentInOsr: return "phi equivalent in OSR";
    case kAnalysisSuccess: return "success";
  }
  return "?";
}

// The quick entrypoints' offsets (Thread::quick_entrypoints), by ART's own accessor: the
// executor traps calls through these slots.
void PrintEntrypoints(InstructionSet isa, std::ostringstream& out) {
#define HUBBLE_ENTRYPOINT(name, ...)                                                          \
  out << "entrypoint " #name " "                                                              \
      << (Is64BitInstructionSet(isa)                                                          \
              ? GetThreadOffset<PointerSize::k64>(kQuick##name).Int32Value()                  \
              : GetThreadOffset<PointerSize::k32>(kQuick##name).Int32Value())                 \
      << "\n";
  QUICK_ENTRYPOINT_LIST(HUBBLE_ENTRYPOINT)
#undef HUBBLE_ENTRYPOINT
}

// What a compiled JNI stub reads and writes besides the Hubble block, by ART's own accessors
// (jni_compiler.cc and the JNI macro assemblers): the executor lays out its Thread, JNIEnvExt
// and ArtMethod images with these, so that the stub's fast paths run as on a device.
template <PointerSize kPointerSize>
void PrintJniLayout(std::ostringstream& out) {
  const size_t ps = static_cast<size_t>(kPointerSize);
  out << "jni_layout state_native " << Thread::StoredThreadStateValue(ThreadState::kNative)
      << "\n";
  out << "jni_layout suspend_flags " << Thread::SuspendOrCheckpointRequestFlags() << "\n";
  out << "jni_layout held_mutator_lock "
      << Thread::HeldMutexOffset<kPointerSize>(kMutatorLock).Int32Value() << "\n";
  out << "jni_layout mutator_lock " << Thread::MutatorLockOffset<kPointerSize>().Int32Value()
      << "\n";
  out << "jni_layout jni_env " << Thread::JniEnvOffset<kPointerSize>().Int32Value() << "\n";
  out << "jni_layout top_quick_frame "
      << Thread::TopOfManagedStackOffset<kPointerSize>().Int32Value() << "\n";
  out << "jni_layout exception " << Thread::ExceptionOffset<kPointerSize>().Int32Value() << "\n";
  out << "jni_layout is_gc_marking " << Thread::IsGcMarkingOffset<kPointerSize>().Int32Value()
      << "\n";
  out << "jni_layout env_self " << JNIEnvExt::SelfOffset(ps).Int32Value() << "\n";
  out << "jni_layout env_cookie " << JNIEnvExt::LocalRefCookieOffset(ps).Int32Value() << "\n";
  out << "jni_layout env_segment_state " << JNIEnvExt::SegmentStateOffset(ps).Int32Value()
      << "\n";
  out << "jni_layout method_jni_entrypoint "
      << ArtMethod::EntryPointFromJniOffset(kPointerSize).Int32Value() << "\n";
}

// A native method's stub, as dex2oat and the JIT make it (OptimizingCompiler::JniCompile ->
// ArtQuickJniCompileMethod, jni_compiler.cc), for one ISA. The stub has no stack maps and its
// trace points (patch 0025) no DisassemblyInformation: the section has the code, the frame and
// the layout the stub reads.
bool CompileJniFor(const Target& target,
                   const DexFile& dex_file,
                   uint32_t method_idx,
                   uint32_t access_flags,
                   std::ostringstream& out) {
  MallocArenaPool pool;
  ArenaAllocator allocator(&pool);
  std::unique_ptr<CompilerOptions> options =
      CommonCompilerTestImpl::CreateCompilerOptions(target.isa, "default");
  JniCompiledMethod stub =
      ArtQuickJniCompileMethod(*options, access_flags, method_idx, dex_file, &allocator);
  out << "isa " << target.name << "\n";
  out << "frame_size " << stub.GetFrameSize() << "\n";
  out << "core_spill_mask " << stub.GetCoreSpillMask() << "\n";
  out << "fp_spill_mask " << stub.GetFpSpillMask() << "\n";
  out << "trace_nodes_removed 0\n";
  out << "frame_entry 0 0\n";
  PrintEntrypoints(target.isa, out);
  if (Is64BitInstructionSet(target.isa)) {
    PrintJniLayout<PointerSize::k64>(out);
  } else {
    PrintJniLayout<PointerSize::k32>(out);
  }
  out << "code " << Hex(stub.GetCode()) << "\n";
  out << "stack_map \n";
  out << "end\n";
  return true;
}

// Compiles the method for one ISA; appends its section to `out`. Returns false with `why`.
bool CompileFor(const Target& target,
                const DexFile& dex_file,
                uint32_t method_idx,
                uint16_t class_def_idx,
                uint32_t access_flags,
                const dex::CodeItem* code_item,
                bool no_trace,
                std::ostringstream& out,
                std::string* why) {
  MallocArenaPool pool;
  ArenaAllocator allocator(&pool);
  ArenaStack arena_stack(&pool);
  std::unique_ptr<CompilerOptions> options =
      CommonCompilerTestImpl::CreateCompilerOptions(target.isa, "default");

  // As optimizing_unit_test.h CreateCFG: no class loader, dex cache or class linker (no
  // Runtime); no VerifiedMethod (dex2oat's verifier results).
  DexCompilationUnit unit(Handle<mirror::ClassLoader>(),
                          /*class_linker=*/nullptr,
                          dex_file,
                          code_item,
                          class_def_idx,
                          method_idx,
                          access_flags,
                          /*verified_method=*/nullptr,
                          Handle<mirror::DexCache>());
  CodeItemDebugInfoAccessor accessor(dex_file, code_item, method_idx);
  // TryCompile: no ArtMethod (AOT of an unresolved class), so dead_reference_safe = false;
  // handles: none (the unit tests pass null handles when no reference type is resolved).
  HGraph* graph = new (&allocator) HGraph(&allocator,
                                          &arena_stack,
                                          /*handles=*/nullptr,
                                          dex_file,
                                          method_idx,
                                          target.isa,
                                          kInvalidInvokeType,
                                          /*dead_reference_safe=*/false,
                                          /*debuggable=*/false,
                                          CompilationKind::kOptimized);
  InstallClassRootStandIns(graph);
  std::unique_ptr<CodeGenerator> codegen = CodeGenerator::Create(graph, *options);
  if (codegen == nullptr) {
    *why = "no code generator";
    return false;
  }
  {
    // The production constructor (outer unit == unit): the patched builder inserts the trace
    // nodes only there (patch 0011 HubbleTraces); the unit-test one leaves the outer unit null.
    HGraphBuilder builder(graph, accessor, &unit, &unit, codegen.get(), /*stats=*/nullptr);
    GraphAnalysisResult result = builder.BuildGraph();
    if (result != kAnalysisSuccess) {
      *why = std::string("graph builder: ") + AnalysisName(result);
      return false;
    }
  }
  size_t removed = no_trace ? RemoveTraceNodes(graph) : 0u;
  RunOptimizations(graph, codegen.get(), unit);
  WriteBarrierElimination(graph, /*stats=*/nullptr).Run();
  AllocateRegisters(graph, codegen.get());
  // The moves register allocation inserted (HParallelMove: spills, reloads, moves at block
  // boundaries and around calls), and how many of them read or write a stack slot: what the
  // trace nodes cost in moves is the traced count minus the untraced one.
  size_t moves = 0;
  size_t stack_moves = 0;
  for (HBasicBlock* block : graph->GetBlocks()) {
    if (block == nullptr) continue;
    for (HInstructionIterator it(block->GetInstructions()); !it.Done(); it.Advance()) {
      if (!it.Current()->IsParallelMove()) continue;
      HParallelMove* parallel_move = it.Current()->AsParallelMove();
      for (size_t i = 0; i < parallel_move->NumMoves(); ++i) {
        const MoveOperands* move = parallel_move->MoveOperandsAt(i);
        ++moves;
        const Location from = move->GetSource();
        const Location to = move->GetDestination();
        if (from.IsStackSlot() || from.IsDoubleStackSlot() || from.IsSIMDStackSlot() ||
            to.IsStackSlot() || to.IsDoubleStackSlot() || to.IsSIMDStackSlot()) {
          ++stack_moves;
        }
      }
    }
  }

  // The code generator records each instruction's and each slow path's code interval when it
  // has a DisassemblyInformation (what --dump-cfg's disassembly uses).
  DisassemblyInformation disasm_info(&allocator);
  codegen->SetDisassemblyInformation(&disasm_info);
  HarnessCodeAllocator code_allocator;
  codegen->Compile(&code_allocator);
  ScopedArenaVector<uint8_t> stack_map = codegen->BuildStackMaps(code_item);
  const DisassemblyInformation& intervals = disasm_info;

  out << "isa " << target.name << "\n";
  out << "frame_size " << codegen->GetFrameSize() << "\n";
  out << "core_spill_mask " << codegen->GetCoreSpillMask() << "\n";
  out << "fp_spill_mask " << codegen->GetFpuSpillMask() << "\n";
  out << "trace_nodes_removed " << removed << "\n";
  out << "moves " << moves << " " << stack_moves << "\n";
  // Where a catch handler's move-exception reads the pending exception (HLoadException:
  // Thread::ExceptionOffset) and HClearException clears it.
  out << "exception_offset "
      << (Is64BitInstructionSet(target.isa)
              ? Thread::ExceptionOffset<PointerSize::k64>().Int32Value()
              : Thread::ExceptionOffset<PointerSize::k32>().Int32Value())
      << "\n";
  out << "frame_entry " << intervals.GetFrameEntryInterval().start << " "
      << intervals.GetFrameEntryInterval().end << "\n";
  // Trace points in block order (linear order, as the code generator emits them).
  for (HBasicBlock* block : codegen->GetGraph()->GetLinearOrder()) {
    for (HInstructionIterator it(block->GetInstructions()); !it.Done(); it.Advance()) {
      HInstruction* insn = it.Current();
      if (!insn->IsTraceEntry() && !insn->IsTraceExit()) continue;
      auto found = intervals.GetInstructionIntervals().find(insn);
      if (found == intervals.GetInstructionIntervals().end()) continue;
      size_t ool_start = 0, ool_end = 0;
      for (const SlowPathCodeInfo& info : intervals.GetSlowPathIntervals()) {
        if (info.slow_path->GetInstruction() == insn) {
          ool_start = info.code_interval.start;
          ool_end = info.code_interval.end;
        }
      }
      // The registers the register allocator gave the node as temps: with the ISA's reserved
      // scratch registers, all the sequence may change (the executor checks the rest).
      std::string temps;
      LocationSummary* locations = insn->GetLocations();
      for (size_t t = 0; locations != nullptr && t < locations->GetTempCount(); ++t) {
        Location temp = locations->GetTemp(t);
        if (!temp.IsRegister()) continue;
        temps += (temps.empty() ? "" : ",") + std::to_string(temp.reg());
      }
      out << "trace " << (insn->IsTraceEntry() ? "entry" : "exit") << " " << insn->GetId() << " "
          << found->second.start << " " << found->second.end << " " << ool_start << " " << ool_end
          << " " << (temps.empty() ? "-" : temps) << "\n";
    }
  }
  for (const SlowPathCodeInfo& info : intervals.GetSlowPathIntervals()) {
    out << "slow_path " << info.slow_path->GetDescription() << " " << info.code_interval.start
        << " " << info.code_interval.end << "\n";
  }
  PrintEntrypoints(target.isa, out);
  // Linker patches. In AOT code a runtime call from a slow path goes through a shared thunk
  // (CodeGenerator{ARM64,ARMVIXL}::InvokeRuntime → EmitEntrypointThunkCall: a BL placeholder)
  // that dex2oat's relative patcher places and points the BL at; the thunk's code is the code
  // generator's own (EmitThunkCode). The executor links them the same way (src/link.rs). Any
  // other patch kind is listed so that the executor can refuse the method.
  ArenaVector<linker::LinkerPatch> patches(allocator.Adapter());
  codegen->EmitLinkerPatches(&patches);
  for (const linker::LinkerPatch& patch : patches) {
    if (patch.GetType() == linker::LinkerPatch::Type::kCallEntrypoint) {
      ArenaVector<uint8_t> thunk(allocator.Adapter());
      std::string thunk_name;
      codegen->EmitThunkCode(patch, &thunk, &thunk_name);
      out << "thunk_call " << patch.LiteralOffset() << " " << patch.EntrypointOffset() << " "
          << Hex(ArrayRef<const uint8_t>(thunk)) << "\n";
    } else {
      out << "linker_patch " << static_cast<int>(patch.GetType()) << " " << patch.LiteralOffset()
          << "\n";
    }
  }
  // Every stack map, decoded by ART's own CodeInfo from the bytes below: native pc offset, dex
  // pc, kind. The executor's double of artInvokeCommon maps a call's return address to the dex
  // pc of its invoke through them, as OatQuickMethodHeader::ToDexPc does
  // (CodeInfo::GetStackMapForNativePcOffset).
  CodeInfo code_info(stack_map.data());
  for (StackMap map : code_info.GetStackMaps()) {
    out << "pc_map " << map.GetNativePcOffset(target.isa) << " " << map.GetDexPc() << " "
        << static_cast<int32_t>(map.GetKind()) << "\n";
  }
  // Where each stack map keeps each dex register (CodeInfo::GetDexRegisterMapOf), in CodeInfo
  // order, as the exception handler reads them: the values a catch block finds in its catch
  // phis' stack slots are copied from the throwing call's locations
  // (QuickExceptionHandler::SetCatchEnvironmentForOptimizedHandler).
  for (StackMap map : code_info.GetStackMaps()) {
    out << "dex_regs " << map.GetNativePcOffset(target.isa) << " "
        << static_cast<int32_t>(map.GetKind());
    DexRegisterMap regs = code_info.GetDexRegisterMapOf(map);
    for (size_t v = 0; v < regs.size(); ++v) {
      DexRegisterLocation loc = regs[v];
      switch (loc.GetKind()) {
        case DexRegisterLocation::Kind::kInStack: out << " s" << loc.GetStackOffsetInBytes(); break;
        case DexRegisterLocation::Kind::kConstant: out << " c" << loc.GetConstant(); break;
        case DexRegisterLocation::Kind::kInRegister: out << " r" << loc.GetMachineRegister(); break;
        case DexRegisterLocation::Kind::kInRegisterHigh:
          out << " R" << loc.GetMachineRegister();
          break;
        case DexRegisterLocation::Kind::kInFpuRegister:
          out << " f" << loc.GetMachineRegister();
          break;
        case DexRegisterLocation::Kind::kInFpuRegisterHigh:
          out << " F" << loc.GetMachineRegister();
          break;
        default: out << " -"; break;
      }
    }
    out << "\n";
  }
  // The try items and their handlers (dex pcs; the handler's exception type as a descriptor,
  // `*` for a catch-all), in the order ArtMethod::FindCatchBlock searches them.
  CodeItemDataAccessor data(dex_file, code_item);
  for (const dex::TryItem& try_item : data.TryItems()) {
    out << "try " << try_item.start_addr_ << " " << (try_item.start_addr_ + try_item.insn_count_);
    for (CatchHandlerIterator it(data, try_item); it.HasNext(); it.Next()) {
      const dex::TypeIndex type = it.GetHandlerTypeIndex();
      out << " " << (type.IsValid() ? dex_file.StringByTypeIdx(type) : "*") << "@"
          << it.GetHandlerAddress();
    }
    out << "\n";
  }
  out << "code " << Hex(code_allocator.GetMemory()) << "\n";
  out << "stack_map " << Hex(ArrayRef<const uint8_t>(stack_map)) << "\n";
  out << "end\n";
  return true;
}

// Writes `text` to `out_path` whole or not at all (a temporary file renamed into place).
bool WriteWhole(const std::string& text, const char* out_path) {
  std::string tmp = std::string(out_path) + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    fprintf(stderr, "%s: cannot write: %s\n", tmp.c_str(), strerror(errno));
    return false;
  }
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp.c_str(), out_path) != 0) {
    fprintf(stderr, "%s: write failed: %s\n", out_path, strerror(errno));
    remove(tmp.c_str());
    return false;
  }
  return true;
}

std::string Descriptor(const DexFile& dex_file, uint32_t method_idx) {
  const dex::MethodId& id = dex_file.GetMethodId(method_idx);
  return std::string(dex_file.GetMethodDeclaringClassDescriptor(id)) + "->" +
         dex_file.GetMethodName(id) + dex_file.GetMethodSignature(id).ToString();
}

// Why the last CompileMethodTo returned 3 (for --all's index).
std::string g_last_failure;

// Compiles one method for `isas` into `out_path`. 0 ok, 2 bad input, 3 not compiled.
int CompileMethodTo(const DexFile& dex_file,
                    const ClassAccessor& klass,
                    const ClassAccessor::Method& method,
                    const std::string& isas,
                    bool no_trace,
                    const char* out_path) {
  const std::string name = Descriptor(dex_file, method.GetIndex());
  const dex::CodeItem* code_item = method.GetCodeItem();
  const bool is_native = (method.GetAccessFlags() & kAccNative) != 0;
  if (code_item == nullptr && !is_native) {
    fprintf(stderr, "%s has no code (abstract)\n", name.c_str());
    return 2;
  }
  if (is_native && no_trace) {
    // kUseHubble is a compile-time constant of the stub compiler (hubble_jni_trace.cc): there
    // is no untraced stub to compare with in this build.
    fprintf(stderr, "%s is native: its JNI stub has no --no-trace form\n", name.c_str());
    return 2;
  }
  const dex::MethodId& id = dex_file.GetMethodId(method.GetIndex());
  std::ostringstream out;
  out << "hubble-compile 1\n";
  out << "method " << name << "\n";
  out << "shorty " << dex_file.GetMethodShorty(id) << "\n";
  out << "static " << (((method.GetAccessFlags() & kAccStatic) != 0) ? 1 : 0) << "\n";
  out << "traced " << (no_trace ? 0 : 1) << "\n";
  if (is_native) {
    // ClassLinker::LoadMethod (class_linker.cc) adds @FastNative/@CriticalNative's flags from
    // the build-visible annotations; the stub compiler reads them from the access flags.
    const uint32_t access_flags =
        method.GetAccessFlags() |
        annotations::GetNativeMethodAnnotationAccessFlags(dex_file, klass.GetClassDef(),
                                                          method.GetIndex());
    out << "jni " << access_flags << "\n";
    out << "method_idx " << method.GetIndex() << "\n";
    std::stringstream list(isas);
    std::string isa_name;
    while (std::getline(list, isa_name, ',')) {
      const Target* target = TargetNamed(isa_name, "arm64, thumb2, x86_64");
      if (target == nullptr) return 2;
      CompileJniFor(*target, dex_file, method.GetIndex(), access_flags, out);
    }
    return WriteWhole(out.str(), out_path) ? 0 : 2;
  }
  out << "dex_code_units "
      << CodeItemInstructionAccessor(dex_file, code_item).InsnsSizeInCodeUnits() << "\n";
  out << "method_idx " << method.GetIndex() << "\n";
  // The method's invoke instructions and the method_ids they name: what the runtime reads at
  // the invoke's dex pc when compiled code calls an invoke trampoline (artInvokeCommon ->
  // FindMethodToCall -> NterpGetMethod: inst.VRegB()), for the executor's double of it.
  for (const DexInstructionPcPair& pair : CodeItemInstructionAccessor(dex_file, code_item)) {
    const Instruction& insn = pair.Inst();
    if (Instruction::IndexTypeOf(insn.Opcode()) != Instruction::kIndexMethodRef) continue;
    const uint32_t callee_idx = insn.VRegB();
    out << "invoke " << pair.DexPc() << " " << insn.Name() << " " << callee_idx << " "
        << Descriptor(dex_file, callee_idx) << "\n";
  }
  // Where a move-exception is: a catch handler that begins with one keeps the exception
  // pending for it to load; the exception handler clears any other's (CatchBlockStackVisitor,
  // quick_exception_handler.cc: clear_exception_).
  for (const DexInstructionPcPair& pair : CodeItemInstructionAccessor(dex_file, code_item)) {
    if (pair.Inst().Opcode() == Instruction::MOVE_EXCEPTION) {
      out << "move_exception " << pair.DexPc() << "\n";
    }
  }
  // The instance fields its iget/iput instructions name: with no class linker they are built
  // unresolved (HUnresolvedInstanceField{Get,Set}: the runtime's field entrypoints, given the
  // dex field index, artGet32InstanceFromCompiledCode & co.), so the executor's double of those
  // entrypoints needs the index's declaring class, name and type (FindFieldFromCode).
  for (const DexInstructionPcPair& pair : CodeItemInstructionAccessor(dex_file, code_item)) {
    const Instruction& insn = pair.Inst();
    if (insn.Opcode() < Instruction::IGET || insn.Opcode() > Instruction::IPUT_SHORT) continue;
    const uint32_t field_idx = insn.VRegC_22c();
    const dex::FieldId& field = dex_file.GetFieldId(field_idx);
    out << "field " << field_idx << " " << dex_file.GetFieldDeclaringClassDescriptor(field) << " "
        << dex_file.GetFieldName(field) << " " << dex_file.GetFieldTypeDescriptor(field) << "\n";
  }
  std::stringstream list(isas);
  std::string isa_name;
  while (std::getline(list, isa_name, ',')) {
    const Target* target = TargetNamed(isa_name, "arm64, thumb2, x86_64, x86");
    if (target == nullptr) return 2;
    std::string why;
    if (!CompileFor(*target, dex_file, method.GetIndex(), klass.GetClassDefIndex(),
                    method.GetAccessFlags(), code_item, no_trace, out, &why)) {
      fprintf(stderr, "%s: not compiled for %s: %s\n", name.c_str(), isa_name.c_str(),
              why.c_str());
      g_last_failure = why;
      return 3;
    }
  }
  return WriteWhole(out.str(), out_path) ? 0 : 2;
}

// Why this harness cannot compile the method without a Runtime, or nullptr. The graph builder
// resolves every method, field, type, string, method handle and call site it meets through the
// class linker (HInstructionBuilder::ResolveMethod & co.), which does not exist here; objects
// (receivers, reference parameters, arrays, monitors, exceptions) need a heap.
const char* NeedsRuntime(const DexFile& dex_file, const ClassAccessor::Method& method,
                         std::string* detail) {
  if (method.GetCodeItem() == nullptr) return "no code (abstract or native)";
  // Instance methods are compiled: `this` is typed as an unresolved class would be
  // (stand-in-reference_type_propagation.patch) and the executor passes an object of the
  // declaring class (proving/art-compile/src/heap.rs).
  const char* shorty = dex_file.GetMethodShorty(dex_file.GetMethodId(method.GetIndex()));
  if (strchr(shorty, 'L') != nullptr) return "reference parameter or result (needs objects)";
  for (const DexInstructionPcPair& pair :
       CodeItemInstructionAccessor(dex_file, method.GetCodeItem())) {
    const Instruction& insn = pair.Inst();
    Instruction::IndexType index = Instruction::IndexTypeOf(insn.Opcode());
    bool needs = index != Instruction::kIndexNone && index != Instruction::kIndexUnknown;
    switch (insn.Opcode()) {
      // Built unresolved (stand-in-instruction_builder.patch) and dispatched by the executor into
      // the callee's compiled code (proving/art-compile/src/dispatch.rs).
      case Instruction::INVOKE_STATIC:
      case Instruction::INVOKE_STATIC_RANGE:
      case Instruction::INVOKE_DIRECT:
      case Instruction::INVOKE_DIRECT_RANGE:
      case Instruction::INVOKE_VIRTUAL:
      case Instruction::INVOKE_VIRTUAL_RANGE:
      case Instruction::INVOKE_SUPER:
      case Instruction::INVOKE_SUPER_RANGE:
      case Instruction::INVOKE_INTERFACE:
      case Instruction::INVOKE_INTERFACE_RANGE:
        needs = false;
        break;
      // Built unresolved too (stand-in-instruction_builder.patch: ResolveField resolves none)
      // and run through the executor's double of the field entrypoints (src/heap.rs).
      case Instruction::IGET: case Instruction::IGET_WIDE: case Instruction::IGET_OBJECT:
      case Instruction::IGET_BOOLEAN: case Instruction::IGET_BYTE: case Instruction::IGET_CHAR:
      case Instruction::IGET_SHORT:
      case Instruction::IPUT: case Instruction::IPUT_WIDE: case Instruction::IPUT_OBJECT:
      case Instruction::IPUT_BOOLEAN: case Instruction::IPUT_BYTE: case Instruction::IPUT_CHAR:
      case Instruction::IPUT_SHORT:
        needs = false;
        break;
      // move-exception loads the pending exception from the Thread and clears it; throw calls
      // pDeliverException with an exception object: the executor's exceptions are objects of
      // its heap (src/heap.rs), delivered by src/catch.rs.
      case Instruction::THROW:
      case Instruction::MOVE_EXCEPTION:
        needs = false;
        break;
      case Instruction::MONITOR_ENTER:
      case Instruction::MONITOR_EXIT:
      case Instruction::ARRAY_LENGTH:
      case Instruction::FILL_ARRAY_DATA:
      case Instruction::AGET: case Instruction::AGET_WIDE: case Instruction::AGET_OBJECT:
      case Instruction::AGET_BOOLEAN: case Instruction::AGET_BYTE: case Instruction::AGET_CHAR:
      case Instruction::AGET_SHORT:
      case Instruction::APUT: case Instruction::APUT_WIDE: case Instruction::APUT_OBJECT:
      case Instruction::APUT_BOOLEAN: case Instruction::APUT_BYTE: case Instruction::APUT_CHAR:
      case Instruction::APUT_SHORT:
        needs = true;
        break;
      default:
        break;
    }
    if (needs) {
      *detail = insn.Name();
      return "needs the runtime (class linker or heap)";
    }
    // dex2oat compiles only what ART's verifier accepts; this harness has no verifier (it needs
    // the runtime), so the one class of unverifiable code the ART tests contain and the builder
    // takes (a return that does not match the method's return type) is refused here.
    const bool returns_void = shorty[0] == 'V';
    const bool is_return_void = insn.Opcode() == Instruction::RETURN_VOID;
    const bool is_return = insn.Opcode() == Instruction::RETURN ||
                           insn.Opcode() == Instruction::RETURN_WIDE ||
                           insn.Opcode() == Instruction::RETURN_OBJECT;
    const bool is_wide_result = shorty[0] == 'J' || shorty[0] == 'D';
    if ((is_return_void && !returns_void) || (is_return && returns_void) ||
        (insn.Opcode() == Instruction::RETURN_WIDE && !is_wide_result) ||
        (insn.Opcode() == Instruction::RETURN && is_wide_result)) {
      *detail = insn.Name();
      return "fails ART's verifier: return does not match the return type";
    }
  }
  return nullptr;
}

// --all OUTDIR: every method of the dex. Each compiles in a child process (a crash of the
// compiler on one method is that method's result, not the run's); OUTDIR/index.txt says, per
// method, "compiled N DESC" (N.txt traced, N-u.txt untraced) or "skipped REASON: DESC".
int CompileAll(const std::vector<std::unique_ptr<const DexFile>>& dex_files,
               const std::string& out_dir) {
  std::ostringstream index;
  size_t n = 0;
  for (const std::unique_ptr<const DexFile>& dex_file : dex_files) {
    for (ClassAccessor klass : dex_file->GetClasses()) {
      for (const ClassAccessor::Method& method : klass.GetMethods()) {
        const std::string name = Descriptor(*dex_file, method.GetIndex());
        std::string detail;
        if (const char* why = NeedsRuntime(*dex_file, method, &detail)) {
          index << "skipped " << why << (detail.empty() ? "" : " (") << detail
                << (detail.empty() ? "" : ")") << ": " << name << "\n";
          continue;
        }
        ++n;
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
          std::string t = out_dir + "/" + std::to_string(n) + ".txt";
          std::string u = out_dir + "/" + std::to_string(n) + "-u.txt";
          int rc = CompileMethodTo(*dex_file, klass, method, "arm64,thumb2,x86_64,x86", false,
                                   t.c_str());
          if (rc == 0) {
            rc = CompileMethodTo(*dex_file, klass, method, "arm64,thumb2,x86_64,x86", true,
                                 u.c_str());
          }
          if (rc != 0 && !g_last_failure.empty()) {
            WriteWhole(g_last_failure, (out_dir + "/" + std::to_string(n) + ".why").c_str());
          }
          _exit(rc);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status)) {
          index << "skipped compiler crashed (signal " << WTERMSIG(status) << "): " << name
                << "\n";
        } else if (WEXITSTATUS(status) != 0) {
          std::string why = "see stderr";
          std::ifstream why_file(out_dir + "/" + std::to_string(n) + ".why");
          if (why_file) std::getline(why_file, why);
          index << "skipped not compiled: " << why << ": " << name << "\n";
        } else {
          index << "compiled " << n << " " << name << "\n";
        }
      }
    }
  }
  return WriteWhole(index.str(), (out_dir + "/index.txt").c_str()) ? 0 : 2;
}

// --classes OUT: every class the dex defines, its superclass, interfaces, instance fields and
// methods, for the executor's class linker double (src/heap.rs): what ClassLinker::LoadClass and
// LinkClass read from the class_def and class_data (field order as the dex lists it: the
// executor's object layout is its own, since every field access here goes through the runtime).
int ListClasses(const std::vector<std::unique_ptr<const DexFile>>& dex_files,
                const char* out_path) {
  std::ostringstream out;
  for (const std::unique_ptr<const DexFile>& dex_file : dex_files) {
    for (ClassAccessor klass : dex_file->GetClasses()) {
      const dex::ClassDef& def = klass.GetClassDef();
      out << "class " << klass.GetDescriptor() << " "
          << (def.superclass_idx_.IsValid() ? dex_file->StringByTypeIdx(def.superclass_idx_)
                                            : "-")
          << " " << def.access_flags_ << "\n";
      if (const dex::TypeList* interfaces = dex_file->GetInterfacesList(def)) {
        for (size_t i = 0; i < interfaces->Size(); ++i) {
          out << "implements " << dex_file->StringByTypeIdx(interfaces->GetTypeItem(i).type_idx_)
              << "\n";
        }
      }
      for (const ClassAccessor::Field& field : klass.GetInstanceFields()) {
        const dex::FieldId& id = dex_file->GetFieldId(field.GetIndex());
        out << "ifield " << dex_file->GetFieldName(id) << " "
            << dex_file->GetFieldTypeDescriptor(id) << "\n";
      }
      for (const ClassAccessor::Method& method : klass.GetMethods()) {
        out << "method " << method.GetAccessFlags() << " "
            << Descriptor(*dex_file, method.GetIndex()) << "\n";
      }
    }
  }
  return WriteWhole(out.str(), out_path) ? 0 : 2;
}

int Usage() {
  fprintf(stderr,
          "usage: hubble-compile-method DEX 'LFoo;->bar(II)I' OUT [--isa LIST] [--no-trace]\n"
          "       hubble-compile-method DEX --all OUTDIR\n"
          "       hubble-compile-method DEX --classes OUT\n");
  return 2;
}

}  // namespace
}  // namespace art

int main(int argc, char** argv) {
  using namespace art;  // NOLINT
  if (argc < 4) return Usage();
  const char* dex_path = argv[1];
  std::string wanted = argv[2];
  const char* out_path = argv[3];
  std::string isas = "arm64,thumb2,x86_64,x86";
  bool no_trace = false;
  for (int i = 4; i < argc; ++i) {
    if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
      isas = argv[++i];
    } else if (strcmp(argv[i], "--no-trace") == 0) {
      no_trace = true;
    } else {
      return Usage();
    }
  }
  MemMap::Init();
  Dex2oatImageTest::AttachCompilerThread();

  std::string error_msg;
  std::vector<std::unique_ptr<const DexFile>> dex_files;
  ArtDexFileLoader loader(dex_path);
  if (!loader.Open(/*verify=*/true, /*verify_checksum=*/true, &error_msg, &dex_files)) {
    fprintf(stderr, "%s: not a dex file ART can open: %s\n", dex_path, error_msg.c_str());
    return 2;
  }
  if (wanted == "--all") return CompileAll(dex_files, out_path);
  if (wanted == "--classes") return ListClasses(dex_files, out_path);
  for (const std::unique_ptr<const DexFile>& dex_file : dex_files) {
    for (ClassAccessor klass : dex_file->GetClasses()) {
      for (const ClassAccessor::Method& method : klass.GetMethods()) {
        if (Descriptor(*dex_file, method.GetIndex()) != wanted) continue;
        return CompileMethodTo(*dex_file, klass, method, isas, no_trace, out_path);
      }
    }
  }
  fprintf(stderr, "%s: no method %s (descriptor form: 'LFoo;->bar(II)I')\n", dex_path,
          wanted.c_str());
  return 2;
}
