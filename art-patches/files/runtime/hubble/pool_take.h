/*
 * Copyright (C) 2026 The Android Open Source Project
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

/*
 * Hubble for AOSP: the pool's block-end path in C++ (many-thread mode, runtime/hubble/README.md),
 * for the trace points ART writes from C++ (trace_point.h: the switch interpreter, the
 * unwinder, the generic JNI path). Compiled code and nterp call the hand-written function of
 * their ISA instead (pool_arm64.S); both leave the pool exactly as the reference writer
 * hubble_format::pool::PoolWriter does (Hubble's host harnesses check this header natively
 * and the assembly in unicorn), and the control plane's pool is the same
 * algorithm on Rust atomics that the loom models check.
 *
 * Like trace_point.h it depends on nothing from ART. Pool and block slots are 64-bit in both
 * modes (a 32-bit process's tickets are 64-bit too: no wrap to compare around); the Thread
 * words are `Word`s.
 */
#ifndef ART_RUNTIME_HUBBLE_POOL_TAKE_H_
#define ART_RUNTIME_HUBBLE_POOL_TAKE_H_

#include <cstddef>
#include <cstdint>

namespace art {
namespace hubble {
namespace tp {

// Pool header slots (hubble_format::pool::P_*); `begin` holds the pool's address | 1.
enum PoolSlot : size_t {
  kPoolNext = 0,        // the ticket counter (the head)
  kPoolMask = 1,        // N - 1
  kPoolBlocks = 2,      // block 0's address
  kPoolDelay = 3,       // N - A: a sealed block is claimable that many tickets after its seal
  kPoolBlockBytes = 4,  // B * 8
  kPoolTake = 5,        // the ISA's hand-written block-end function (compiled code calls it)
};

// Block header slots (hubble_format::pool::H_*); the data slots follow.
enum BlockSlot : size_t {
  kBlockIdent = 0,  // seq | tid << 32
  kBlockTicket = 1,
  kBlockTime = 2,   // the full counter when taken
  kBlockClose = 3,  // one past the last slot written; 0 while open
  kBlockState = 4,  // kOwned, or bound << 1: free for tickets >= bound
  kBlockHeaderSlots = 5,
};

constexpr uint64_t kSealed = 8;  // cursor of a thread that holds no block
constexpr uint64_t kOwned = 1;
constexpr int kPoolTries = 32;

inline uint64_t* PoolSlot(uintptr_t at, size_t slot) {
  return reinterpret_cast<uint64_t*>(at) + slot;
}
inline uint64_t LoadSlot(uint64_t* slot) { return __atomic_load_n(slot, __ATOMIC_RELAXED); }
inline void StoreSlot(uint64_t* slot, uint64_t v) { __atomic_store_n(slot, v, __ATOMIC_RELAXED); }

// Seals the thread's block (if it holds one) and takes the next claimable one. `block` is the
// thread's five words, `tid` ART's Thread::tls32_.tid. Returns the slot to write the record at
// (a fresh block: room for a two-slot entry), or 0 when no block was claimable within
// kPoolTries tickets (the record is dropped and seq skips one, so readers see the gap).
// Called by SlowPath once it has seen cursor >= limit after its acquire fence and stop == 0.
template <typename Word, typename Clock>
__attribute__((noinline, cold)) Word PoolTake(Word* block, const uint32_t* tid) {
  const uintptr_t pool = static_cast<uintptr_t>(Load(&block[kBegin])) - 1;
  const Word cursor = Load(&block[kCursor]);
  if (cursor != kSealed) {
    // close, the next seq, then the state with release: whoever claims the block (acquire)
    // sees its data and close. The head is relaxed: an older one only makes the bound earlier.
    const uintptr_t held = static_cast<uintptr_t>(Load(&block[kEnd]));
    StoreSlot(PoolSlot(held, kBlockClose), cursor);
    const uint32_t seq = static_cast<uint32_t>(LoadSlot(PoolSlot(held, kBlockIdent)));
    Store(&block[kEnd], static_cast<Word>(seq + 1u));
    const uint64_t bound =
        LoadSlot(PoolSlot(pool, kPoolNext)) + LoadSlot(PoolSlot(pool, kPoolDelay));
    __atomic_store_n(PoolSlot(held, kBlockState), bound << 1, __ATOMIC_RELEASE);
  }
  Store(&block[kCursor], static_cast<Word>(kSealed));
  Store(&block[kLimit], Word{0});
  const uint64_t mask = LoadSlot(PoolSlot(pool, kPoolMask));
  const uint64_t blocks = LoadSlot(PoolSlot(pool, kPoolBlocks));
  const uint64_t bytes = LoadSlot(PoolSlot(pool, kPoolBlockBytes));
  for (int i = 0; i < kPoolTries; ++i) {
    const uint64_t ticket = __atomic_fetch_add(PoolSlot(pool, kPoolNext), 1, __ATOMIC_RELAXED);
    const uintptr_t candidate = static_cast<uintptr_t>(blocks + (ticket & mask) * bytes);
    uint64_t* state = PoolSlot(candidate, kBlockState);
    uint64_t seen = LoadSlot(state);
    if (seen == kOwned || ticket < (seen >> 1)) {
      continue;  // a lagging thread's, or sealed less than N - A tickets ago
    }
    if (!__atomic_compare_exchange_n(state, &seen, kOwned, /*weak=*/false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED)) {
      continue;  // another taker of the same index won it
    }
    const uint32_t seq = static_cast<uint32_t>(Load(&block[kEnd]));
    StoreSlot(PoolSlot(candidate, kBlockIdent), (static_cast<uint64_t>(*tid) << 32) | seq);
    StoreSlot(PoolSlot(candidate, kBlockTicket), ticket);
    StoreSlot(PoolSlot(candidate, kBlockTime), Clock::Read());
    StoreSlot(PoolSlot(candidate, kBlockClose), 0);
    Store(&block[kEnd], static_cast<Word>(candidate));
    // The plain store may hide a stop doorbell rung since the store of 0 above: the control
    // thread rings again at every poll round (Hubble §6).
    const uintptr_t limit = candidate + bytes - (sizeof(Word) == 8 ? 8 : 0);
    Store(&block[kLimit], static_cast<Word>(limit));
    return static_cast<Word>(candidate + kBlockHeaderSlots * 8);
  }
  Store(&block[kEnd], static_cast<Word>(static_cast<uint32_t>(Load(&block[kEnd])) + 1u));
  return 0;
}

}  // namespace tp
}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_POOL_TAKE_H_
