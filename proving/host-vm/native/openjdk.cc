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

// Stand-in for libopenjdk.so, which ART loads by bare name while it starts
// (Runtime::InitNativeMethods in runtime/runtime.cc; a library that does not load is fatal,
// JNI_OnLoad is optional). On Android it holds the natives of libcore's OpenJDK classes
// (java.io.FileDescriptor, java.lang.System, ...). This one registers no native methods yet: the
// host VM's boot class path (proving/host-vm/mini-core) adds here the ones its classes declare.
// scripts/host-vm-build compiles it.

#include <jni.h>

extern "C" JNIEXPORT jint JNI_OnLoad(JavaVM* /*vm*/, void* /*reserved*/) {
  return JNI_VERSION_1_6;
}
