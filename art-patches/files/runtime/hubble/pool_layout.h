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
 * Hubble for AOSP: the pool's layout for the hand-written block-end functions (pool_arm64.S,
 * pool_x86_64.S; many-thread mode, runtime/hubble/README.md), in bytes. This is the one
 * definition: Hubble's Rust crates read it through bindgen (hubble_layout; hubble_format::pool's
 * P_* header slots, H_* block header slots, SEALED, OWNED, TRIES); pool_take.h (C++) names the
 * same slots. Preprocessor definitions only: included by assembly.
 */
#ifndef ART_RUNTIME_HUBBLE_POOL_LAYOUT_H_
#define ART_RUNTIME_HUBBLE_POOL_LAYOUT_H_

// Pool header: the ticket counter (the head), N - 1, block 0's address, N - A (how many
// tickets after its seal a block is claimable), a block's bytes, the block-end function.
#define HUBBLE_POOL_NEXT 0
#define HUBBLE_POOL_MASK 8
#define HUBBLE_POOL_BLOCKS 16
#define HUBBLE_POOL_DELAY 24
#define HUBBLE_POOL_BLOCK_BYTES 32
#define HUBBLE_POOL_TAKE 40
// Block header: seq | tid << 32, the ticket it was taken at, the full counter then, one past
// the last slot written (0 while open), OWNED or bound << 1; the data follows.
#define HUBBLE_BLOCK_IDENT 0
#define HUBBLE_BLOCK_TICKET 8
#define HUBBLE_BLOCK_TIME 16
#define HUBBLE_BLOCK_CLOSE 24
#define HUBBLE_BLOCK_STATE 32
#define HUBBLE_BLOCK_DATA 40
// The cursor of a thread that holds no block; a block's state while a thread writes it; the
// tickets one take tries before it drops the record.
#define HUBBLE_POOL_SEALED 8
#define HUBBLE_POOL_OWNED 1
#define HUBBLE_POOL_TRIES 32

#endif  // ART_RUNTIME_HUBBLE_POOL_LAYOUT_H_
