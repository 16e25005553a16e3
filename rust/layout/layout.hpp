// bindgen's input for hubble_layout (rust/layout/build.rs; Android.bp's libhubble_layout): the
// layouts ART's headers define, which the hand-written assembly, the emitted code and the Rust
// crates share. pool_layout.h: the pool's header and block header words, in bytes, and the
// SEALED/OWNED/TRIES values; trace_point.h: the per-thread block's words (BlockWord), the slot
// markers (kMark*), the task kinds (TaskKind) and the identity mask. The include path is ART's
// runtime directory (art-patches/files/runtime here, a copy of what art/runtime/hubble holds
// once the series is applied): the very files libart compiles.
#include "hubble/pool_layout.h"
#include "hubble/trace_point.h"
