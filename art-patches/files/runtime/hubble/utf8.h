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
 * Hubble for AOSP: ART's strings as UTF-8 for the cxx bridge (lifecycle.cc, hubble_bridge.cc).
 */
#ifndef ART_RUNTIME_HUBBLE_UTF8_H_
#define ART_RUNTIME_HUBBLE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace art {
namespace hubble {

// The strings ART hands to Rust are modified UTF-8 (thread names from a Java String through
// GetStringUTFChars, ArtMethod::PrettyMethod's names from dex: each half of a surrogate pair
// encoded on its own, U+0000 as C0 80) or raw bytes (the kernel's thread name, cut at 15 bytes,
// possibly inside a character); rust::Str and rust::String must be UTF-8 (cxx aborts the process
// otherwise). Surrogate pairs become one 4-byte character; U+0000, a lone surrogate and every
// byte that starts no valid character become U+FFFD.
inline std::string ToUtf8(const char* s, size_t n) {
  static constexpr char kReplacement[] = "\xef\xbf\xbd";
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s);
  std::string out;
  out.reserve(n);
  size_t i = 0;
  auto cont = [&](size_t k) { return i + k < n && (p[i + k] & 0xc0) == 0x80; };
  auto three = [&](size_t at) {
    return ((p[at] & 0x0fu) << 12) | ((p[at + 1] & 0x3fu) << 6) | (p[at + 2] & 0x3fu);
  };
  while (i < n) {
    const uint8_t b = p[i];
    size_t len = 0;  // bytes copied as they are
    if (b < 0x80) {
      len = 1;
    } else if (b >= 0xc2 && b <= 0xdf && cont(1)) {
      len = 2;
    } else if (b >= 0xe0 && b <= 0xef && cont(1) && cont(2)) {
      const uint32_t cp = three(i);
      if (cp >= 0xd800 && cp <= 0xdfff) {
        i += 3;
        if (cp <= 0xdbff && i < n && p[i] == 0xed && cont(1) && cont(2) &&
            three(i) >= 0xdc00 && three(i) <= 0xdfff) {
          const uint32_t c = 0x10000 + ((cp - 0xd800) << 10) + (three(i) - 0xdc00);
          out.push_back(static_cast<char>(0xf0 | (c >> 18)));
          out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
          out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
          out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
          i += 3;
        } else {
          out += kReplacement;  // a lone surrogate
        }
        continue;
      }
      len = cp >= 0x800 ? 3 : 0;
    } else if (b >= 0xf0 && b <= 0xf4 && cont(1) && cont(2) && cont(3)) {
      const uint32_t cp = ((b & 0x07u) << 18) | ((p[i + 1] & 0x3fu) << 12) |
                          ((p[i + 2] & 0x3fu) << 6) | (p[i + 3] & 0x3fu);
      len = (cp >= 0x10000 && cp <= 0x10ffff) ? 4 : 0;
    } else if (b == 0xc0 && cont(1) && p[i + 1] == 0x80) {
      out += kReplacement;  // modified UTF-8's U+0000
      i += 2;
      continue;
    }
    if (len == 0) {
      out += kReplacement;
      i += 1;
    } else {
      out.append(s + i, len);
      i += len;
    }
  }
  return out;
}

inline std::string ToUtf8(const std::string& s) { return ToUtf8(s.data(), s.size()); }

}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_UTF8_H_
