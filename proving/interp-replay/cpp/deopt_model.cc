// Host model of how ART 14 runs, unwinds, deoptimizes and OSRs Java frames, driving Hubble's REAL
// hooks (art-patches/files/runtime/hubble/trace_hooks.h and trace_point.h, compiled unchanged
// against the stand-ins of cpp/art-model/) at the places the patches put them, to check that the
// trace stays balanced (tests/deopt.rs).
//
// Every function below follows the ART function named in its comment, in
// art/ at android-14.0.0_r15 (the line numbers are of that tree), reduced to the control flow
// that decides which frames run, end, or are rebuilt; what is left out is said where it is. A
// line that calls a Hubble hook is the patch's line verbatim and ends in `// HOOK <patch>`:
// tests/deopt.rs checks each one against art-patches/patches/, so the model cannot drift from
// the series.
//
// What is modelled:
//  * a method runs one way in a scenario (ModelKind): the switch interpreter, nterp, compiled
//    code, or a native method on the generic JNI path;
//  * its "dex code" is a list of ModelOps: `c` invoke, `i` invoke that compiled callers inline,
//    `t` throw, `T` throw while a debugger forces the interpreter for exceptions (the whole
//    fragment deoptimizes with the exception pending), `d` an HDeoptimize (single-frame
//    deoptimization from compiled code), `D` a runtime call after which the stack must be
//    deoptimized (full fragment, e.g. instrumentation), `o` a loop back-edge (OSR, from the switch
//    interpreter, when the method has OSR code);
//  * a method flagged `catches` has a catch-all handler over all its instructions that resumes at
//    the next instruction.
// Compiled code and nterp run their trace points as the emitted code does (HTraceEntry before
// anything that can deoptimize, HTraceExit at the return; nterp's macros), on the ISAs where they
// exist: HUBBLE_MODEL_COMPILED_TRACES / HUBBLE_MODEL_NTERP_TRACES, which tests/deopt.rs derives
// from the files of the series (the emitters and nterp macro files), not from trace_point.h's
// table, which is what is being checked.
//
// stdin:  "m <id> <s|n|c|j> <flags: - or C (catches) and/or O (has OSR code)> <ops...>" lines,
//         then "run <id>".
// stdout: "M <id> <ArtMethod* hex>" per method, then ground truth as it happens:
//         "B <serial> <method id> <entry expected 0|1> <slot>" a Java invocation starts,
//         "E <serial> <slot>" it is over (returned, unwound, or its frame dropped),
//         where <slot> is the ring cursor's slot index at that moment; then "X <0|1>" (an
//         exception still pending), "cursor <byte offset>" and every ring slot in hex.
#include <sys/mman.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "runtime/hubble/trace_hooks.h"

#ifndef HUBBLE_MODEL_COMPILED_TRACES
#error "HUBBLE_MODEL_COMPILED_TRACES must be 0 or 1"
#endif
#ifndef HUBBLE_MODEL_NTERP_TRACES
#error "HUBBLE_MODEL_NTERP_TRACES must be 0 or 1"
#endif

namespace art {

// ------------------------------------------------------------------------------- ground truth

struct ModelInvocation {
  int serial;
  ArtMethod* method;
  bool ended = false;
};

namespace {

constexpr uint32_t kDexNoIndex = 0xFFFFFFFFu;  // libdexfile/dex/dex_file_types.h

Thread* g_self = nullptr;
uintptr_t g_ring_begin = 0;
int g_next_serial = 0;
std::vector<ArtMethod*> g_methods;

uint64_t Slot() { return (g_self->hubble_block[hubble::tp::kCursor] - g_ring_begin) / 8; }

ModelInvocation* Begin(ArtMethod* m, bool entry_expected) {
  auto* inv = new ModelInvocation{g_next_serial++, m};
  printf("B %d %d %d %" PRIu64 "\n", inv->serial, m->id, entry_expected ? 1 : 0, Slot());
  return inv;
}

void End(ModelInvocation* inv) {
  DCHECK(!inv->ended);
  inv->ended = true;
  printf("E %d %" PRIu64 "\n", inv->serial, Slot());
}

// -------------------------------------------------------------------- thread and managed stack

// Thread::tlsPtr_.exception (a Throwable; the model needs only whether one is pending).
bool g_exception = false;
// Dbg::IsForcedInterpreterNeededForException (thread.cc 3923): set by `T`.
bool g_force_interpreter_for_exception = false;

// The deoptimization context (Thread::PushDeoptimizationContext, thread.cc 274-287): the
// pending exception saved across the long jump, and whether the deoptimization came from
// compiled code (HDeoptimize) or from the runtime.
struct DeoptimizationContext {
  bool exception;
  bool from_code;
};
std::vector<DeoptimizationContext> g_deopt_contexts;
// Thread's stacked shadow frame of kind kDeoptimizationShadowFrame (PushStackedShadowFrame).
ShadowFrame* g_stacked_deopt_frame = nullptr;

// What both continuations of a deoptimization (HandleDeoptimization, and
// DeoptimizeWithDeoptimizationException after a long jump) start with: PopDeoptimizationContext
// (the pending exception back) and PopStackedShadowFrame (the deoptimized frames).
struct Deoptimized {
  ShadowFrame* frames;
  bool from_code;
};
Deoptimized PopDeoptimization() {
  DeoptimizationContext context = g_deopt_contexts.back();
  g_deopt_contexts.pop_back();
  g_exception = context.exception;
  ShadowFrame* frames = g_stacked_deopt_frame;
  g_stacked_deopt_frame = nullptr;
  return Deoptimized{frames, context.from_code};
}

const OatQuickMethodHeader kCompiledHeader(/*nterp=*/false);
const OatQuickMethodHeader kNterpHeader(/*nterp=*/true);

// A quick frame (compiled code, nterp, OSR code, or a native method's JNI frame) with the one
// level of inlining the model supports.
struct QuickFrame {
  ArtMethod* method;
  ModelInvocation* invocation;
  const OatQuickMethodHeader* header;
  bool osr = false;  // OSR code, continuing an interpreter frame's invocation
  uint32_t dex_pc = 0;
  ArtMethod* inlined = nullptr;
  ModelInvocation* inlined_invocation = nullptr;
  uint32_t inlined_dex_pc = 0;
};

// ManagedStack fragments, each the quick frames between an upcall (invoke stub, OSR stub,
// interpreter bridge) and the next; shadow frames need no list here.
std::vector<std::vector<QuickFrame*>> g_fragments;

struct FragmentScope {  // Thread::PushManagedStackFragment / PopManagedStackFragment
  FragmentScope() { g_fragments.emplace_back(); }
  ~FragmentScope() { g_fragments.pop_back(); }
};

struct FrameScope {  // a quick frame is on the stack from its entry to its return or long jump
  explicit FrameScope(QuickFrame* f) : f_(f) { g_fragments.back().push_back(f); }
  ~FrameScope() { Pop(); }
  void Pop() {
    if (f_ != nullptr) {
      DCHECK(!g_fragments.back().empty() && g_fragments.back().back() == f_);
      g_fragments.back().pop_back();
      f_ = nullptr;
    }
  }

 private:
  QuickFrame* f_;
};

// Long jumps (QuickExceptionHandler::DoLongJump, quick_exception_handler.cc 719-744) as C++
// exceptions: the C++ frames between the throw and the target are the quick frames it removes.
struct LongJumpToCatch {
  QuickFrame* handler;  // nullptr: the upcall (the exception goes back to the stub's caller)
  bool in_inlined;
};
struct LongJumpToInterpreterBridge {  // partial-fragment deoptimization: into the bridge that
  QuickFrame* deoptimized;            // replaces the deoptimized frame's call (643-656)
};
struct LongJumpToInvokeStub {};  // full fragment: the stub returns the deoptimization exception

// ------------------------------------------------------------------- compiled code and nterp

void Entry(ArtMethod* m) {
  hubble::tp::Entry<uintptr_t>(hubble::BlockOf(g_self), reinterpret_cast<uintptr_t>(m),
                               hubble::TidOf(g_self));
}
void Exit() { hubble::tp::Exit<uintptr_t>(hubble::BlockOf(g_self), hubble::TidOf(g_self)); }

bool CodeTraces(const QuickFrame& f) {
  return f.header->IsNterpMethodHeader() ? HUBBLE_MODEL_NTERP_TRACES : HUBBLE_MODEL_COMPILED_TRACES;
}

bool EntryExpected(ArtMethod* m) {
  switch (m->kind) {
    case ModelKind::kSwitch: return true;   // Execute (0020), every ISA
    case ModelKind::kNative: return true;   // generic JNI (0022), every ISA
    case ModelKind::kNterp: return HUBBLE_MODEL_NTERP_TRACES;
    case ModelKind::kCompiled: return HUBBLE_MODEL_COMPILED_TRACES;
  }
  return false;
}

void RunQuick(QuickFrame* f, uint32_t from_dex_pc);
void RunNative(ArtMethod* m);
void InvokeStub(ArtMethod* m);
void ExecuteFresh(ArtMethod* m);
[[noreturn]] void QuickDeliverException();
void EnterInterpreterFromDeoptimize(ShadowFrame* shadow_frame, bool from_code);

// thread.cc 4669-4693 Thread::DeoptimizeWithDeoptimizationException: the deoptimized frames
// continue in the interpreter, on the fragment the long jump reached.
void DeoptimizeWithDeoptimizationException() {
  DCHECK(g_fragments.back().empty());
  Deoptimized d = PopDeoptimization();
  EnterInterpreterFromDeoptimize(d.frames, d.from_code);
}

// ----------------------------------------------------------------------- the switch interpreter

// interpreter_common.cc 147-199 MoveToExceptionHandler: FindCatchBlock (168) finds the handler or
// not; listeners are not modelled (none registered). The catch-all handler consumes the
// exception (clear_exception) and resumes at the next instruction.
bool MoveToExceptionHandler(ShadowFrame& shadow_frame) {
  if (!shadow_frame.GetMethod()->catches) {
    return false;  // 170-186: MethodUnwindEvent; ForcePopFrame is not modelled
  }
  shadow_frame.SetDexPC(shadow_frame.GetDexPC() + 1);  // 188
  g_exception = false;                                  // 196-197
  return true;
}

// jit.cc 548-611 Jit::MaybeDoOnStackReplacement, with patch 0020's line once OSR code is certain
// to run (after 586-588). The stack-limit, instrumentation and
// HaveLocalsChanged checks (558-579) pass; PrepareForOsr (582-588) finds OSR code when the method
// has it, entering at the loop header (the instruction after the back-edge here).
bool MaybeDoOnStackReplacement(ShadowFrame* shadow_frame) {
  Thread* thread = g_self;
  ArtMethod* method = shadow_frame->GetMethod();
  if (!method->has_osr) {
    return false;  // 586-588
  }
  hubble::TraceOsrTakesOver(thread, shadow_frame);  // HOOK 0020
  {
    // 591 PopShadowFrame; 592-593 a new fragment; 594-599 art_quick_osr_stub runs the OSR code
    // (a compiled frame that continues this frame's invocation); 601-603 the OSR code may end in a
    // full-fragment deoptimization; 604 PopManagedStackFragment.
    FragmentScope fragment;
    QuickFrame osr{method, shadow_frame->invocation, &kCompiledHeader};
    osr.osr = true;
    try {
      RunQuick(&osr, shadow_frame->GetDexPC() + 1);
    } catch (const LongJumpToCatch& jump) {
      DCHECK(jump.handler == nullptr);  // uncaught in the OSR code: back to this frame, pending
    } catch (const LongJumpToInvokeStub&) {
      DeoptimizeWithDeoptimizationException();  // 601-603
    }
  }
  return true;  // 606-610
}

// interpreter_switch_impl-inl.h 226-250 HandleBranch (unpatched: the OSR case is marked in
// MaybeDoOnStackReplacement). Returns whether the interpreter loop is to be left
// (ExitInterpreterLoop, 242).
bool HandleBranch(ShadowFrame& shadow_frame_) {
  return MaybeDoOnStackReplacement(&shadow_frame_);
}

// interpreter_switch_impl-inl.h 87-110 HandlePendingException: false when the exception leaves
// this frame (ExecuteSwitchImpl returns with it pending).
bool HandlePendingException(ShadowFrame& shadow_frame) {
  return MoveToExceptionHandler(shadow_frame);
}

// The invoke instructions of the switch interpreter (interpreter_common.h DoInvoke → DoCall):
// another switch-interpreted method through ArtInterpreterToInterpreterBridge (interpreter.cc
// 585-610: same fragment, Execute), anything else through ArtInterpreterToCompiledCodeBridge
// (interpreter_common.cc 256-290) → ArtMethod::Invoke's stub (a new fragment).
void InterpreterInvoke(ArtMethod* callee) {
  if (callee->kind == ModelKind::kSwitch) {
    ExecuteFresh(callee);
  } else {
    InvokeStub(callee);
  }
}

// interpreter_switch_impl-inl.h ExecuteSwitchImplCpp: runs from the frame's dex pc until a return,
// an exception leaving the frame, or OSR code that finished the method.
void ExecuteSwitch(ShadowFrame& shadow_frame) {
  const std::vector<ModelOp>& ops = shadow_frame.GetMethod()->ops;
  uint32_t pc = shadow_frame.GetDexPC();
  while (pc < ops.size()) {
    shadow_frame.SetDexPC(pc);
    const ModelOp& op = ops[pc];
    switch (op.code) {
      case 'c':
      case 'i':  // the interpreter never inlines
        InterpreterInvoke(g_methods[op.target]);
        break;
      case 't':
      case 'T':  // the debugger's forced interpreter changes nothing for an interpreted frame
        g_exception = true;
        break;
      case 'o':
        if (HandleBranch(shadow_frame)) {
          return;
        }
        break;
      default:  // 'd', 'D': compiled code's deoptimization points; nothing here
        break;
    }
    if (g_exception) {
      if (!HandlePendingException(shadow_frame)) {
        return;  // the exception leaves this frame
      }
      pc = shadow_frame.GetDexPC();
      continue;
    }
    pc++;
  }
  shadow_frame.SetDexPC(pc);
}

// interpreter.cc 250-343 Execute, with patch 0020. With from_deoptimize the method-entry part
// (267-331) is skipped; without it, the JIT dispatch (274-294) is not taken (the model's
// switch-interpreted methods have no compiled code) and no instrumentation listeners are
// installed (296-330).
void Execute(Thread* self, ShadowFrame& shadow_frame, bool from_deoptimize) {
  ArtMethod* method = shadow_frame.GetMethod();
  if (LIKELY(!from_deoptimize)) {  // HOOK 0020
    hubble::TraceEntry(self, method);  // HOOK 0020
  }
  ExecuteSwitch(shadow_frame);
  hubble::TraceInterpretedExit(self, shadow_frame);  // HOOK 0020
}

// A switch-interpreted invocation from scratch: ArtInterpreterToInterpreterBridge (interpreter.cc
// 585-610), EnterInterpreterFromEntryPoint via artQuickToInterpreterBridge
// (quick_trampoline_entrypoints.cc 703-727, which pushes a fragment at 723) or
// EnterInterpreterFromInvoke (346-443): a shadow frame at dex pc 0, Execute, pop.
void ExecuteFresh(ArtMethod* m) {
  ModelInvocation* inv = Begin(m, EntryExpected(m));
  ShadowFrame shadow_frame(m, 0);
  shadow_frame.invocation = inv;
  Execute(g_self, shadow_frame, /*from_deoptimize=*/false);
  End(inv);
}

// interpreter.cc 452-565 EnterInterpreterFromDeoptimize (deopt_method_type is kDefault and no
// frame has ForceRetryInstruction: the kKeepDexPc and retry branches 486-499 are not modelled).
void EnterInterpreterFromDeoptimize(ShadowFrame* shadow_frame, bool from_code) {
  Thread* self = g_self;
  size_t frame_cnt = 0;
  while (shadow_frame != nullptr) {  // 463
    const uint32_t dex_pc = shadow_frame->GetDexPC();
    uint32_t new_dex_pc = dex_pc;
    const std::vector<ModelOp>& ops = shadow_frame->GetMethod()->ops;
    if (UNLIKELY(g_exception)) {  // 472-483
      new_dex_pc = MoveToExceptionHandler(*shadow_frame) ? shadow_frame->GetDexPC() : kDexNoIndex;
    } else if (!from_code) {  // 484-538
      DCHECK(dex_pc < ops.size());
      if (ops[dex_pc].code == 'c' || ops[dex_pc].code == 'i') {  // 510-523: past the invoke
        new_dex_pc = dex_pc + 1;
      } else {  // 531-537: re-executed (the model's other instructions are idempotent)
        DCHECK(frame_cnt == 0u);
      }
    } else {  // 539-545: the dex pc at which compiled code requested the deoptimization
      DCHECK(frame_cnt == 0u);
    }
    if (new_dex_pc != kDexNoIndex) {  // 546-555
      shadow_frame->SetDexPC(new_dex_pc);
      Execute(self, *shadow_frame, /*from_deoptimize=*/true);
    } else {
      hubble::TraceDeoptimizedFrameUnwound(self, *shadow_frame);  // HOOK 0020
    }
    // The frame is gone (556-557). OSR code's deoptimized frame continues the interpreter frame
    // that called the OSR code, whose invocation ends with that frame.
    if (!shadow_frame->osr_continuation) {
      End(shadow_frame->invocation);
    }
    ShadowFrame* old_frame = shadow_frame;
    shadow_frame = shadow_frame->GetLink();
    ShadowFrame::DeleteDeoptimizedFrame(old_frame);
    from_code = false;  // 560
    frame_cnt++;        // 562
  }
}

// --------------------------------------------------------------------------- stack walks

// quick_exception_handler.cc 82-117 CatchBlockStackVisitor::VisitFrame with patch 0021, and
// HandleTryItems 123-157. Returns whether the walk goes on (the frame is unwound).
bool VisitForCatch(QuickFrame* q, bool is_inlined) {
  // The StackVisitor accessors the patch's line uses, for the frame being visited.
  auto GetThread = [] { return g_self; };
  auto GetCurrentOatQuickMethodHeader = [q] { return q->header; };
  auto IsInInlinedFrame = [is_inlined] { return is_inlined; };
  ArtMethod* method = is_inlined ? q->inlined : q->method;
  ModelInvocation* invocation = is_inlined ? q->inlined_invocation : q->invocation;
  // HandleTryItems: a native method has no dex pc (127-129); FindCatchBlock (133).
  bool continue_stack_walk = method->IsNative() || !method->catches;
  if (continue_stack_walk) {
    hubble::TraceUnwoundQuickFrame(GetThread(), method, GetCurrentOatQuickMethodHeader(), IsInInlinedFrame());  // HOOK 0021
    // The invocation is over, unless this is OSR code: the interpreter frame that ran it ends it.
    if (!(q->osr && !is_inlined)) {
      End(invocation);
    }
  }
  return continue_stack_walk;
}

// thread.cc 3887-3970 Thread::QuickDeliverException: with the debugger forcing the interpreter
// for this exception and a quick frame on top (3921-3939), the fragment is deoptimized with the
// exception saved in the deoptimization context; otherwise FindCatch (quick_exception_handler.cc
// 178-262, one walk: unwind listeners are not modelled) long-jumps to the handler or the upcall.
[[noreturn]] void DeoptimizeStack(bool single_frame, QuickFrame* top);
[[noreturn]] void QuickDeliverException() {
  DCHECK(g_exception);
  if (g_force_interpreter_for_exception) {
    g_force_interpreter_for_exception = false;
    g_deopt_contexts.push_back({/*exception=*/true, /*from_code=*/false});  // 3932-3937
    g_exception = false;
    DeoptimizeStack(/*single_frame=*/false, nullptr);  // 3938 artDeoptimize
  }
  std::vector<QuickFrame*>& fragment = g_fragments.back();
  for (size_t i = fragment.size(); i-- > 0;) {  // innermost first, inlined frames before theirs
    QuickFrame* q = fragment[i];
    if (q->inlined != nullptr && !VisitForCatch(q, /*is_inlined=*/true)) {
      g_exception = false;  // clear_exception_ (FindCatch 256-259)
      throw LongJumpToCatch{q, true};
    }
    if (!VisitForCatch(q, /*is_inlined=*/false)) {
      g_exception = false;
      throw LongJumpToCatch{q, false};
    }
  }
  throw LongJumpToCatch{nullptr, false};  // 85-91: the upcall; the exception stays pending
}

// quick_exception_handler.cc 427-533 DeoptimizeStackVisitor::VisitFrame with patch 0021, driven
// by DeoptimizeStack (673-682) or DeoptimizeSingleFrame (684-717), then artDeoptimizeImpl's long
// jump (quick_deoptimization_entrypoints.cc 44-59).
[[noreturn]] void DeoptimizeStack(bool single_frame, QuickFrame* top) {
  std::vector<QuickFrame*>& fragment = g_fragments.back();
  ShadowFrame* prev_shadow_frame_ = nullptr;
  QuickFrame* single_frame_deopt = nullptr;
  size_t i = fragment.size();
  while (i-- > 0 && single_frame_deopt == nullptr) {
    QuickFrame* q = fragment[i];
    if (q->method->IsNative()) {  // 439-447: the native method on top is skipped
      DCHECK(i + 1 == fragment.size());
      continue;
    }
    for (int inlined = q->inlined != nullptr ? 1 : 0; inlined >= 0; --inlined) {
      const bool is_inlined = inlined == 1;
      auto GetCurrentOatQuickMethodHeader = [q] { return q->header; };
      auto IsInInlinedFrame = [is_inlined] { return is_inlined; };
      ArtMethod* method = is_inlined ? q->inlined : q->method;
      ShadowFrame* new_frame =
          ShadowFrame::CreateDeoptimizedFrame(method, is_inlined ? q->inlined_dex_pc : q->dex_pc);
      new_frame->invocation = is_inlined ? q->inlined_invocation : q->invocation;
      new_frame->osr_continuation = q->osr && !is_inlined;
      // 480, then patch 0021's line.
      new_frame->SetHubbleNoExitRecord(!hubble::QuickFrameTracedItsEntry(GetCurrentOatQuickMethodHeader(), IsInInlinedFrame()));  // HOOK 0021
      if (prev_shadow_frame_ != nullptr) {  // 500-509
        prev_shadow_frame_->SetLink(new_frame);
      } else {
        g_stacked_deopt_frame = new_frame;
      }
      prev_shadow_frame_ = new_frame;
      if (single_frame && !is_inlined) {  // 511-516
        single_frame_deopt = q;
      }
    }
  }
  (void)top;
  // 432-434 FinishStackWalk at the upcall (full fragment) or at the next frame (partial):
  // PrepareForLongJumpToInvokeStubOrInterpreterBridge (658-671).
  if (single_frame_deopt == nullptr || single_frame_deopt == fragment.front()) {
    throw LongJumpToInvokeStub{};
  }
  throw LongJumpToInterpreterBridge{single_frame_deopt};
}

// ---------------------------------------------------------------- quick frames and natives

// A call from compiled code or nterp: compiled and nterp callees and natives run on the same
// fragment; a switch-interpreted callee through artQuickToInterpreterBridge
// (quick_trampoline_entrypoints.cc 673-730, a new fragment at 723).
void QuickCall(ArtMethod* callee) {
  switch (callee->kind) {
    case ModelKind::kSwitch: {
      FragmentScope fragment;
      ExecuteFresh(callee);
      break;
    }
    case ModelKind::kNative:
      RunNative(callee);
      break;
    case ModelKind::kCompiled:
    case ModelKind::kNterp: {
      QuickFrame frame{callee, Begin(callee, EntryExpected(callee)),
                       callee->kind == ModelKind::kNterp ? &kNterpHeader : &kCompiledHeader};
      RunQuick(&frame, 0);
      break;
    }
  }
}

// quick_trampoline_entrypoints.cc 608-671 HandleDeoptimization (from artQuickToInterpreterBridge
// 697-700): the deoptimized frames continue in the interpreter on a new fragment; then the bridge
// returns to the deoptimized frame's caller as its callee would have.
void RunDeoptimizedFrames() {
  Deoptimized d = PopDeoptimization();  // the exception: 661-663
  FragmentScope fragment;               // 641
  EnterInterpreterFromDeoptimize(d.frames, d.from_code);
}

// Compiled code (the optimizing compiler's output with patch 0011's HTraceEntry/HTraceExit),
// nterp (0023's macros) or OSR code (no HTraceEntry: it starts at a loop header).
void RunQuick(QuickFrame* f, uint32_t from_dex_pc) {
  FrameScope scope(f);
  const bool nterp = f->header->IsNterpMethodHeader();
  if (!f->osr && CodeTraces(*f)) {
    Entry(f->method);  // HTraceEntry / HUBBLE_NTERP_TRACE_ENTRY
  }
  f->dex_pc = from_dex_pc;
  try {
    for (;;) {
      try {
        for (;;) {
          const bool in_inlined = f->inlined != nullptr;
          ArtMethod* m = in_inlined ? f->inlined : f->method;
          uint32_t& pc = in_inlined ? f->inlined_dex_pc : f->dex_pc;
          if (pc >= m->ops.size()) {
            if (!in_inlined) {
              break;  // the method returns
            }
            End(f->inlined_invocation);  // the inlined body is done: back in the caller's code
            f->inlined = nullptr;
            f->dex_pc++;
            continue;
          }
          const ModelOp& op = m->ops[pc];
          switch (op.code) {
            case 'i':
              if (!in_inlined && !nterp) {
                ArtMethod* callee = g_methods[op.target];
                DCHECK(callee->kind == ModelKind::kCompiled);
                f->inlined = callee;
                f->inlined_invocation = Begin(callee, /*entry_expected=*/false);
                f->inlined_dex_pc = 0;
                continue;
              }
              [[fallthrough]];
            case 'c':
              QuickCall(g_methods[op.target]);
              if (g_exception) {
                QuickDeliverException();  // the compiled code's exception check after the call
              }
              break;
            case 'T':
              g_force_interpreter_for_exception = true;
              [[fallthrough]];
            case 't':
              g_exception = true;
              QuickDeliverException();
            case 'd':
              if (!nterp) {
                // quick_deoptimization_entrypoints.cc 69-83 artDeoptimizeFromCompiledCode.
                g_deopt_contexts.push_back({g_exception, /*from_code=*/true});
                g_exception = false;
                DeoptimizeStack(/*single_frame=*/true, f);
              }
              break;
            case 'D':
              // quick_deoptimization_entrypoints.cc 62-66 artDeoptimize (the runtime pushed the
              // context: instrumentation's DeoptimizeIfNeeded, from_code = false).
              g_deopt_contexts.push_back({g_exception, /*from_code=*/false});
              g_exception = false;
              DeoptimizeStack(/*single_frame=*/false, f);
            default:  // 'o': compiled code's own loop (nterp's OSR is not modelled)
              break;
          }
          pc++;
        }
        break;
      } catch (const LongJumpToCatch& jump) {
        if (jump.handler != f) {
          throw;
        }
        // The handler is in this frame (the catch-all resumes at the next instruction); an
        // inlined callee that did not catch was unwound by the walk.
        if (jump.in_inlined) {
          f->inlined_dex_pc++;
        } else {
          f->inlined = nullptr;
          f->dex_pc++;
        }
      }
    }
  } catch (const LongJumpToInterpreterBridge& jump) {
    if (jump.deoptimized != f) {
      throw;
    }
    scope.Pop();
    RunDeoptimizedFrames();
    return;
  }
  if (CodeTraces(*f)) {
    Exit();  // HTraceExit (after HMethodExitHook, 0011) / HUBBLE_NTERP_TRACE_EXIT
  }
  scope.Pop();
  if (!f->osr) {
    End(f->invocation);
  }
}

// A native method on the generic JNI path (quick_trampoline_entrypoints.cc 1953-2060
// artQuickGenericJniTrampoline, quick_jni_entrypoints.cc 147-200 GenericJniMethodEnd, patch
// 0022). Its body calls back into Java through JNI (ArtMethod::Invoke) and returns as soon as an
// exception is pending; `t` is a ThrowNew.
void RunNative(ArtMethod* called) {
  Thread* self = g_self;
  QuickFrame frame{called, Begin(called, EntryExpected(called)), &kCompiledHeader};
  FrameScope scope(&frame);
  hubble::TraceEntry(self, called);  // HOOK 0022
  for (const ModelOp& op : called->ops) {
    if (op.code == 'c' || op.code == 'i') {
      InvokeStub(g_methods[op.target]);
    } else if (op.code == 't' || op.code == 'T') {
      g_exception = true;
    }
    if (g_exception) {
      break;
    }
  }
  hubble::TraceExit(self);  // HOOK 0022
  if (g_exception) {
    QuickDeliverException();  // from the JNI frame, which the walk visits first
  }
  scope.Pop();
  End(frame.invocation);
}

// art_method.cc 366-447 ArtMethod::Invoke: a new fragment (380-381), the invoke stub into the
// method's entry point (art_quick_to_interpreter_bridge for a switch-interpreted method), and a
// full-fragment deoptimization continued in the interpreter (427-432).
void InvokeStub(ArtMethod* m) {
  FragmentScope fragment;
  try {
    QuickCall(m);
  } catch (const LongJumpToCatch& jump) {
    DCHECK(jump.handler == nullptr);  // uncaught in this fragment: the stub returns, pending
  } catch (const LongJumpToInvokeStub&) {
    DeoptimizeWithDeoptimizationException();
  }
}

// ------------------------------------------------------------------------------- the driver

int Main() {
  const size_t slots = 1 << 14;
  void* ring = mmap(nullptr, slots * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  // ArtMethods below 4 GiB: one slot per entry (the checker maps records to slots one to one).
  void* methods = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (ring == MAP_FAILED || methods == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  static Thread thread;
  g_self = &thread;
  g_ring_begin = reinterpret_cast<uintptr_t>(ring);
  uintptr_t* block = hubble::BlockOf(g_self);
  namespace tp = hubble::tp;
  block[tp::kBegin] = g_ring_begin;
  block[tp::kEnd] = g_ring_begin + slots * 8;
  block[tp::kLimit] = block[tp::kEnd] - 8;
  tp::WriteSlot(g_ring_begin, tp::Pack(0, tp::kMarkStart));
  block[tp::kCursor] = g_ring_begin + 8;

  char line[4096];
  int run = -1;
  size_t used = 0;
  while (fgets(line, sizeof(line), stdin) != nullptr) {
    char* save = nullptr;
    char* tok = strtok_r(line, " \t\n", &save);
    if (tok == nullptr) continue;
    if (strcmp(tok, "run") == 0) {
      run = atoi(strtok_r(nullptr, " \t\n", &save));
      continue;
    }
    if (strcmp(tok, "m") != 0) {
      fprintf(stderr, "bad line: %s\n", tok);
      return 3;
    }
    int id = atoi(strtok_r(nullptr, " \t\n", &save));
    const char* kind = strtok_r(nullptr, " \t\n", &save);
    const char* flags = strtok_r(nullptr, " \t\n", &save);
    if (id != static_cast<int>(g_methods.size()) || kind == nullptr || flags == nullptr) {
      fprintf(stderr, "methods must be numbered 0, 1, ... in order\n");
      return 3;
    }
    ArtMethod* m = new (static_cast<char*>(methods) + used) ArtMethod();
    used += (sizeof(ArtMethod) + 15) & ~size_t{15};
    m->id = id;
    m->kind = kind[0] == 's' ? ModelKind::kSwitch
            : kind[0] == 'n' ? ModelKind::kNterp
            : kind[0] == 'c' ? ModelKind::kCompiled
                             : ModelKind::kNative;
    m->catches = strchr(flags, 'C') != nullptr;
    m->has_osr = strchr(flags, 'O') != nullptr;
    while ((tok = strtok_r(nullptr, " \t\n", &save)) != nullptr) {
      m->ops.push_back({tok[0], tok[1] != '\0' ? atoi(tok + 1) : -1});
    }
    g_methods.push_back(m);
    printf("M %d %" PRIxPTR "\n", id, reinterpret_cast<uintptr_t>(m));
  }
  if (run < 0 || run >= static_cast<int>(g_methods.size())) {
    fprintf(stderr, "no run line\n");
    return 3;
  }
  // The thread calls into Java from native code (JNI CallStaticVoidMethod → ArtMethod::Invoke).
  InvokeStub(g_methods[run]);
  printf("X %d\n", g_exception ? 1 : 0);
  const uint64_t cursor = block[tp::kCursor];
  printf("cursor %" PRIu64 "\n", cursor - g_ring_begin);
  const uint64_t* s = static_cast<const uint64_t*>(ring);
  for (uint64_t i = 0; i < (cursor - g_ring_begin) / 8; ++i) {
    printf("%016" PRIx64 "\n", s[i]);
  }
  return 0;
}

}  // namespace
}  // namespace art

int main() { return art::Main(); }
