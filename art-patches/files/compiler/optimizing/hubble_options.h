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
 * Hubble for AOSP: the build-time switch of method tracing in compiled code.
 *
 *   ART_USE_HUBBLE=0   the instruction builder inserts no trace points: compiled code is
 *                      byte-for-byte what it is without Hubble (the IR nodes and emitters still
 *                      build, so the switch cannot rot).
 *   ART_USE_HUBBLE=1   (default) every method compiled on its own gets HTraceEntry/HTraceExit.
 *
 * Set it with -DART_USE_HUBBLE=0 (Android.bp cflags, or the host build's CXXFLAGS).
 */
#ifndef ART_COMPILER_OPTIMIZING_HUBBLE_OPTIONS_H_
#define ART_COMPILER_OPTIMIZING_HUBBLE_OPTIONS_H_

#ifndef ART_USE_HUBBLE
#define ART_USE_HUBBLE 1
#endif

namespace art {
namespace hubble {

static constexpr bool kUseHubble = ART_USE_HUBBLE != 0;

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_OPTIMIZING_HUBBLE_OPTIONS_H_
