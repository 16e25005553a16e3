/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 *
 * The native half of Natives.java: bound by their Java_ names; callBack calls back into Java.
 */
#include <jni.h>

JNIEXPORT jint JNICALL Java_Natives_add(JNIEnv* env, jclass cls, jint a, jint b) {
  (void) env;
  (void) cls;
  return a + b;
}

JNIEXPORT jint JNICALL Java_Natives_fastAdd(JNIEnv* env, jclass cls, jint a, jint b) {
  (void) env;
  (void) cls;
  return a + 2 * b;
}

JNIEXPORT jint JNICALL Java_Natives_callBack(JNIEnv* env, jclass cls, jint who, jint x) {
  static jmethodID inner;
  if (inner == NULL) {
    inner = (*env)->GetStaticMethodID(env, cls, "inner", "(II)I");
    if (inner == NULL) {
      return -1;
    }
  }
  return (*env)->CallStaticIntMethod(env, cls, inner, who, x) + 1;
}
