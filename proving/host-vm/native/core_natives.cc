/*
 * Copyright (C) 2026 Hubble for AOSP
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

// The natives of the host VM's boot class path (proving/host-vm/mini-core) that ART itself does not
// register: time, the standard streams, stat and readdir for java.io.File, floating-point bits and
// formatting, libm, and the three Runtime natives libcore implements through ART's openjdkjvm
// (JVM_NativeLoad, JVM_GC, JVM_Exit).
//
// Nothing here calls RegisterNatives: the functions carry their JNI names, and ART finds them by
// dlsym in the libraries it loaded for the boot class loader (Runtime::InitNativeMethods loads
// libjavacore.so, libopenjdk.so and libicu_jni.so with a null class loader;
// Libraries::FindNativeMethod looks a boot class's native up in exactly those). So this file must be
// linked into one of them -- libjavacore.so -- and the exported names must stay unmangled
// (extern "C"). Overloaded natives use JNI's long names (name__signature).
//
// The openjdkjvm entry points are looked up at run time (dlsym, then dlopen of libopenjdkjvm.so).
// When the process has no openjdkjvm: Runtime.nativeLoad calls what JVM_NativeLoad calls,
// art::JavaVMExt::LoadNativeLibrary, found in libart by its (libstdc++) mangled name; Runtime.gc
// reports that it did nothing (Runtime.java then has ART's heap task processor run a collection);
// Runtime.exit calls exit(3).

#include <jni.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace {

void* OpenJdkJvmSymbol(const char* name) {
  void* sym = dlsym(RTLD_DEFAULT, name);
  if (sym == nullptr) {
    static void* handle = dlopen("libopenjdkjvm.so", RTLD_NOW | RTLD_GLOBAL);
    if (handle != nullptr) {
      sym = dlsym(handle, name);
    }
  }
  return sym;
}

// A symbol of libart itself, which JniInvocation dlopened without RTLD_GLOBAL: found through the
// library that holds the JNI function table.
void* LibartSymbol(JNIEnv* env, const char* name) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(env->functions->GetVersion), &info) == 0 ||
      info.dli_fname == nullptr) {
    return nullptr;
  }
  void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  return handle != nullptr ? dlsym(handle, name) : nullptr;
}

void ThrowNew(JNIEnv* env, const char* class_name, const char* message) {
  jclass c = env->FindClass(class_name);
  if (c != nullptr) {
    env->ThrowNew(c, message);
  }
}

// Shortest decimal digits that read back as the same value: "d.ddde[+-]x" from printf's %.*e.
template <typename T>
std::string ShortestScientific(T value, int max_digits) {
  char buf[64];
  for (int digits = 1; digits <= max_digits; ++digits) {
    snprintf(buf, sizeof(buf), "%.*e", digits - 1, static_cast<double>(value));
    T back = sizeof(T) == sizeof(float) ? static_cast<T>(strtof(buf, nullptr))
                                        : static_cast<T>(strtod(buf, nullptr));
    if (back == value) {
      break;
    }
  }
  return buf;
}

// Java's Double/Float.toString layout for a finite, non-zero magnitude: plain decimal for
// 10^-3 <= |v| < 10^7, otherwise d.dddE[-]n; at least one digit after the point either way.
std::string JavaFloatingString(bool negative, const std::string& sci) {
  // sci is "d[.ddd]e[+-]xx"
  size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exponent = atoi(sci.c_str() + e + 1);
  std::string out = negative ? "-" : "";
  if (exponent >= -3 && exponent < 7) {
    if (exponent >= 0) {
      std::string int_part = digits.substr(0, std::min<size_t>(digits.size(), exponent + 1));
      while (static_cast<int>(int_part.size()) < exponent + 1) int_part += '0';
      std::string frac = static_cast<int>(digits.size()) > exponent + 1
                             ? digits.substr(exponent + 1) : "0";
      out += int_part + "." + frac;
    } else {
      out += "0.";
      out += std::string(-exponent - 1, '0');
      out += digits;
    }
  } else {
    out += digits.substr(0, 1);
    out += ".";
    out += digits.size() > 1 ? digits.substr(1) : "0";
    out += "E" + std::to_string(exponent);
  }
  return out;
}

template <typename T>
jstring FloatingToString(JNIEnv* env, T value, int max_digits) {
  if (isnan(value)) return env->NewStringUTF("NaN");
  if (isinf(value)) return env->NewStringUTF(value > 0 ? "Infinity" : "-Infinity");
  bool negative = signbit(value);
  if (value == 0) return env->NewStringUTF(negative ? "-0.0" : "0.0");
  T magnitude = negative ? -value : value;
  return env->NewStringUTF(
      JavaFloatingString(negative, ShortestScientific(magnitude, max_digits)).c_str());
}

}  // namespace

// The same bits as another type (std::bit_cast is C++20): Double's and Float's raw bits.
template <typename To, typename From>
static To SameBits(From from) {
  static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the size");
  To to;
  memcpy(&to, &from, sizeof(to));
  return to;
}

extern "C" {

// java.lang.System

JNIEXPORT jlong JNICALL Java_java_lang_System_currentTimeMillis(JNIEnv*, jclass) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<jlong>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

JNIEXPORT jlong JNICALL Java_java_lang_System_nanoTime(JNIEnv*, jclass) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<jlong>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

JNIEXPORT jstring JNICALL Java_java_lang_System_getenv(JNIEnv* env, jclass, jstring name) {
  if (name == nullptr) {
    ThrowNew(env, "java/lang/NullPointerException", "name == null");
    return nullptr;
  }
  const char* n = env->GetStringUTFChars(name, nullptr);
  if (n == nullptr) return nullptr;
  const char* value = getenv(n);
  env->ReleaseStringUTFChars(name, n);
  return value == nullptr ? nullptr : env->NewStringUTF(value);
}

// java.io.FileOutputStream

JNIEXPORT jint JNICALL Java_java_io_FileOutputStream_writeBytes(JNIEnv* env, jclass, jint fd,
                                                                jbyteArray bytes, jint off,
                                                                jint len) {
  if (len <= 0) return 0;
  jbyte* data = static_cast<jbyte*>(malloc(len));
  if (data == nullptr) {
    ThrowNew(env, "java/lang/OutOfMemoryError", "FileOutputStream.writeBytes");
    return -1;
  }
  env->GetByteArrayRegion(bytes, off, len, data);
  if (env->ExceptionCheck()) {
    free(data);
    return -1;
  }
  jint done = 0;
  while (done < len) {
    ssize_t n = write(fd, data + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      free(data);
      return -1;
    }
    done += static_cast<jint>(n);
  }
  free(data);
  return done;
}

// java.io.File

JNIEXPORT jint JNICALL Java_java_io_File_mode(JNIEnv* env, jclass, jstring path) {
  const char* p = env->GetStringUTFChars(path, nullptr);
  if (p == nullptr) return -1;
  struct stat st;
  int rc = stat(p, &st);
  env->ReleaseStringUTFChars(path, p);
  return rc == 0 ? static_cast<jint>(st.st_mode) : -1;
}

JNIEXPORT jobjectArray JNICALL Java_java_io_File_listNames(JNIEnv* env, jclass, jstring path) {
  const char* p = env->GetStringUTFChars(path, nullptr);
  if (p == nullptr) return nullptr;
  DIR* dir = opendir(p);
  env->ReleaseStringUTFChars(path, p);
  if (dir == nullptr) return nullptr;
  std::vector<std::string> names;
  while (struct dirent* e = readdir(dir)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  closedir(dir);
  jclass string_class = env->FindClass("java/lang/String");
  if (string_class == nullptr) return nullptr;
  jobjectArray result = env->NewObjectArray(static_cast<jsize>(names.size()), string_class, nullptr);
  for (size_t i = 0; result != nullptr && i < names.size(); ++i) {
    jstring name = env->NewStringUTF(names[i].c_str());
    if (name == nullptr) return nullptr;
    env->SetObjectArrayElement(result, static_cast<jsize>(i), name);
    env->DeleteLocalRef(name);
  }
  return result;
}

// java.lang.Runtime (through ART's openjdkjvm when the process has it)

JNIEXPORT jstring JNICALL Java_java_lang_Runtime_nativeLoad(JNIEnv* env, jclass, jstring filename,
                                                            jobject loader, jclass caller) {
  using NativeLoad = jstring (*)(JNIEnv*, jstring, jobject, jclass);
  auto load = reinterpret_cast<NativeLoad>(OpenJdkJvmSymbol("JVM_NativeLoad"));
  if (load != nullptr) {
    return load(env, filename, loader, caller);
  }
  // What JVM_NativeLoad does (openjdkjvm/OpenjdkJvm.cc): JavaVMExt::LoadNativeLibrary, a member
  // function of the JavaVM (JavaVMExt derives from JavaVM first, so the pointers are the same).
  using LoadNativeLibrary = bool (*)(JavaVM*, JNIEnv*, const std::string&, jobject, jclass,
                                     std::string*);
  static auto art_load = reinterpret_cast<LoadNativeLibrary>(LibartSymbol(env,
      "_ZN3art9JavaVMExt17LoadNativeLibraryEP7_JNIEnvRKNSt7__cxx1112basic_stringIcSt11char_"
      "traitsIcESaIcEEEP8_jobjectP7_jclassPS8_"));
  JavaVM* vm = nullptr;
  if (art_load == nullptr || env->GetJavaVM(&vm) != JNI_OK) {
    return env->NewStringUTF(
        "mini-core: no way to load a native library here: neither JVM_NativeLoad (ART's "
        "openjdkjvm) nor art::JavaVMExt::LoadNativeLibrary is in the process");
  }
  const char* chars = env->GetStringUTFChars(filename, nullptr);
  if (chars == nullptr) return nullptr;
  std::string path(chars);
  env->ReleaseStringUTFChars(filename, chars);
  std::string error;
  if (art_load(vm, env, path, loader, caller, &error)) {
    return nullptr;
  }
  env->ExceptionClear();  // As JVM_NativeLoad: a failed JNI_OnLoad leaves no pending exception.
  return env->NewStringUTF(error.c_str());
}

JNIEXPORT void JNICALL Java_java_lang_Runtime_nativeExit(JNIEnv*, jclass, jint status) {
  using Exit = void (*)(jint);
  auto jvm_exit = reinterpret_cast<Exit>(OpenJdkJvmSymbol("JVM_Exit"));
  if (jvm_exit != nullptr) jvm_exit(status);
  fflush(nullptr);
  exit(status);
}

// Returns whether it collected (JVM_GC was there).
JNIEXPORT jboolean JNICALL Java_java_lang_Runtime_nativeGc(JNIEnv*, jclass) {
  using Gc = void (*)();
  auto gc = reinterpret_cast<Gc>(OpenJdkJvmSymbol("JVM_GC"));
  if (gc == nullptr) return JNI_FALSE;
  gc();
  return JNI_TRUE;
}

JNIEXPORT jint JNICALL Java_java_lang_Runtime_nativeAvailableProcessors(JNIEnv*, jclass) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<jint>(n) : 1;
}

JNIEXPORT jlong JNICALL Java_java_lang_Runtime_nativeMemory(JNIEnv*, jclass, jint which) {
  static const char* const kNames[] = {"JVM_FreeMemory", "JVM_TotalMemory", "JVM_MaxMemory"};
  if (which < 0 || which > 2) return 0;
  using Memory = jlong (*)();
  auto f = reinterpret_cast<Memory>(OpenJdkJvmSymbol(kNames[which]));
  return f != nullptr ? f() : 0;
}

// java.lang.Double / java.lang.Float

JNIEXPORT jlong JNICALL Java_java_lang_Double_doubleToRawLongBits(JNIEnv*, jclass, jdouble d) {
  return SameBits<jlong>(d);
}

JNIEXPORT jdouble JNICALL Java_java_lang_Double_longBitsToDouble(JNIEnv*, jclass, jlong bits) {
  return SameBits<jdouble>(bits);
}

JNIEXPORT jint JNICALL Java_java_lang_Float_floatToRawIntBits(JNIEnv*, jclass, jfloat f) {
  return SameBits<jint>(f);
}

JNIEXPORT jfloat JNICALL Java_java_lang_Float_intBitsToFloat(JNIEnv*, jclass, jint bits) {
  return SameBits<jfloat>(bits);
}

JNIEXPORT jstring JNICALL Java_java_lang_Double_toStringImpl(JNIEnv* env, jclass, jdouble d) {
  return FloatingToString<double>(env, d, 17);
}

JNIEXPORT jstring JNICALL Java_java_lang_Float_toStringImpl(JNIEnv* env, jclass, jfloat f) {
  return FloatingToString<float>(env, f, 9);
}

// Java's Double.parseDouble grammar, minus hexadecimal significands with no digits: an optional
// sign, then "NaN", "Infinity", or what strtod reads, with an optional [fFdD] suffix.
JNIEXPORT jboolean JNICALL Java_java_lang_Double_parse(JNIEnv* env, jclass, jstring s,
                                                       jdoubleArray out) {
  const char* chars = env->GetStringUTFChars(s, nullptr);
  if (chars == nullptr) return JNI_FALSE;
  std::string text(chars);
  env->ReleaseStringUTFChars(s, chars);
  std::string body = text;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body = body.substr(1);
  }
  double value;
  if (body == "NaN") {
    value = NAN;
  } else if (body == "Infinity") {
    value = negative ? -INFINITY : INFINITY;
  } else {
    if (!body.empty() && strchr("fFdD", body.back()) != nullptr &&
        body.rfind("0x", 0) != 0 && body.rfind("0X", 0) != 0) {
      body.pop_back();
    }
    if (body.empty() || !(isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.')) {
      return JNI_FALSE;
    }
    char* end = nullptr;
    errno = 0;
    value = strtod(body.c_str(), &end);
    if (end == body.c_str() || *end != '\0') return JNI_FALSE;
    if (negative) value = -value;
  }
  env->SetDoubleArrayRegion(out, 0, 1, &value);
  return JNI_TRUE;
}

// java.lang.Math

#define MINI_CORE_MATH1(name, fn) \
  JNIEXPORT jdouble JNICALL Java_java_lang_Math_##name(JNIEnv*, jclass, jdouble a) { return fn(a); }
#define MINI_CORE_MATH2(name, fn)                                                     \
  JNIEXPORT jdouble JNICALL Java_java_lang_Math_##name(JNIEnv*, jclass, jdouble a,   \
                                                       jdouble b) {                  \
    return fn(a, b);                                                                  \
  }

MINI_CORE_MATH1(sin, sin)
MINI_CORE_MATH1(cos, cos)
MINI_CORE_MATH1(tan, tan)
MINI_CORE_MATH1(asin, asin)
MINI_CORE_MATH1(acos, acos)
MINI_CORE_MATH1(atan, atan)
MINI_CORE_MATH1(sinh, sinh)
MINI_CORE_MATH1(cosh, cosh)
MINI_CORE_MATH1(tanh, tanh)
MINI_CORE_MATH1(exp, exp)
MINI_CORE_MATH1(expm1, expm1)
MINI_CORE_MATH1(log, log)
MINI_CORE_MATH1(log10, log10)
MINI_CORE_MATH1(log1p, log1p)
MINI_CORE_MATH1(sqrt, sqrt)
MINI_CORE_MATH1(cbrt, cbrt)
MINI_CORE_MATH1(ceil, ceil)
MINI_CORE_MATH1(floor, floor)
MINI_CORE_MATH1(rint, rint)
MINI_CORE_MATH2(atan2, atan2)
MINI_CORE_MATH2(pow, pow)
MINI_CORE_MATH2(hypot, hypot)
MINI_CORE_MATH2(nextAfter, nextafter)

JNIEXPORT jdouble JNICALL Java_java_lang_Math_fma__DDD(JNIEnv*, jclass, jdouble a, jdouble b,
                                                       jdouble c) {
  return fma(a, b, c);
}

JNIEXPORT jfloat JNICALL Java_java_lang_Math_fma__FFF(JNIEnv*, jclass, jfloat a, jfloat b,
                                                      jfloat c) {
  return fmaf(a, b, c);
}

}  // extern "C"
