/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 *
 * The native half of JniTest.java: a user library (libc only) that tests/run builds with gcc and
 * JniTest loads with System.load. One method is registered by JNI_OnLoad with RegisterNatives,
 * the others are found by their Java_ names.
 */
#include <jni.h>
#include <stdio.h>
#include <string.h>

static int onload_calls;

static jint add(JNIEnv* env, jclass cls, jint a, jint b) {
  (void) env;
  (void) cls;
  return a + b;
}

JNIEXPORT jint JNICALL Java_JniTest_onLoadCalls(JNIEnv* env, jclass cls) {
  (void) env;
  (void) cls;
  return onload_calls;
}

JNIEXPORT jlong JNICALL Java_JniTest_sum(JNIEnv* env, jclass cls, jintArray array) {
  (void) cls;
  jsize n = (*env)->GetArrayLength(env, array);
  jint* elems = (*env)->GetIntArrayElements(env, array, NULL);
  jlong s = 0;
  for (jsize i = 0; i < n; i++) {
    s += elems[i];
    elems[i] *= 2;  /* written back: mode 0 */
  }
  (*env)->ReleaseIntArrayElements(env, array, elems, 0);
  return s;
}

JNIEXPORT jstring JNICALL Java_JniTest_greet(JNIEnv* env, jclass cls, jstring name) {
  (void) cls;
  const char* utf = (*env)->GetStringUTFChars(env, name, NULL);
  char buf[256];
  snprintf(buf, sizeof buf, "hello, %s (%d UTF-8 bytes, %d chars) from C", utf,
           (int) strlen(utf), (int) (*env)->GetStringLength(env, name));
  (*env)->ReleaseStringUTFChars(env, name, utf);
  return (*env)->NewStringUTF(env, buf);
}

/* Calls back: an instance method of obj, and a static method of JniTest. */
JNIEXPORT jint JNICALL Java_JniTest_callBack(JNIEnv* env, jclass cls, jobject obj, jint x) {
  jclass obj_class = (*env)->GetObjectClass(env, obj);
  jmethodID twice = (*env)->GetMethodID(env, obj_class, "twice", "(I)I");
  jmethodID plus_one = (*env)->GetStaticMethodID(env, cls, "plusOne", "(I)I");
  if (twice == NULL || plus_one == NULL) {
    return -1;
  }
  jint t = (*env)->CallIntMethod(env, obj, twice, x);
  return (*env)->CallStaticIntMethod(env, cls, plus_one, t);
}

/* Reads and writes a field, and builds a new object with a constructor. */
JNIEXPORT jobject JNICALL Java_JniTest_bump(JNIEnv* env, jclass cls, jobject counter) {
  (void) cls;
  jclass c = (*env)->GetObjectClass(env, counter);
  jfieldID f = (*env)->GetFieldID(env, c, "value", "I");
  jint v = (*env)->GetIntField(env, counter, f);
  (*env)->SetIntField(env, counter, f, v + 1);
  jmethodID ctor = (*env)->GetMethodID(env, c, "<init>", "(I)V");
  return (*env)->NewObject(env, c, ctor, v * 100);
}

JNIEXPORT void JNICALL Java_JniTest_throwFromC(JNIEnv* env, jclass cls, jstring message) {
  (void) cls;
  const char* utf = (*env)->GetStringUTFChars(env, message, NULL);
  char buf[256];
  snprintf(buf, sizeof buf, "thrown in C: %s", utf);
  (*env)->ReleaseStringUTFChars(env, message, utf);
  jclass iae = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
  (*env)->ThrowNew(env, iae, buf);
}

/* Calls a Java method that throws, sees the exception pending, clears it, reports its message. */
JNIEXPORT jstring JNICALL Java_JniTest_catchInC(JNIEnv* env, jclass cls) {
  jmethodID thrower = (*env)->GetStaticMethodID(env, cls, "thrower", "()V");
  (*env)->CallStaticVoidMethod(env, cls, thrower);
  if (!(*env)->ExceptionCheck(env)) {
    return (*env)->NewStringUTF(env, "no exception");
  }
  jthrowable t = (*env)->ExceptionOccurred(env);
  (*env)->ExceptionClear(env);
  jclass tc = (*env)->GetObjectClass(env, t);
  jmethodID get_message = (*env)->GetMethodID(env, tc, "getMessage", "()Ljava/lang/String;");
  jstring msg = (jstring) (*env)->CallObjectMethod(env, t, get_message);
  const char* utf = (*env)->GetStringUTFChars(env, msg, NULL);
  char buf[256];
  snprintf(buf, sizeof buf, "caught in C: %s", utf);
  (*env)->ReleaseStringUTFChars(env, msg, utf);
  return (*env)->NewStringUTF(env, buf);
}

/* Global references survive the call (and collections); a double and a long round trip. */
static jobject saved;

JNIEXPORT void JNICALL Java_JniTest_save(JNIEnv* env, jclass cls, jobject o) {
  (void) cls;
  if (saved != NULL) {
    (*env)->DeleteGlobalRef(env, saved);
  }
  saved = (*env)->NewGlobalRef(env, o);
}

JNIEXPORT jobject JNICALL Java_JniTest_saved(JNIEnv* env, jclass cls) {
  (void) cls;
  return (*env)->NewLocalRef(env, saved);
}

JNIEXPORT jdouble JNICALL Java_JniTest_mix(JNIEnv* env, jclass cls, jlong l, jdouble d, jfloat f,
                                           jboolean z, jchar c, jbyte b, jshort s) {
  (void) env;
  (void) cls;
  return (double) l + d * 2 + f + (z ? 1000 : 0) + c + b + s;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved) {
  (void) reserved;
  JNIEnv* env;
  if ((*vm)->GetEnv(vm, (void**) &env, JNI_VERSION_1_6) != JNI_OK) {
    return JNI_ERR;
  }
  jclass cls = (*env)->FindClass(env, "JniTest");
  if (cls == NULL) {
    return JNI_ERR;
  }
  static const JNINativeMethod methods[] = {
    {"add", "(II)I", (void*) add},
  };
  if ((*env)->RegisterNatives(env, cls, methods, 1) != 0) {
    return JNI_ERR;
  }
  onload_calls++;
  return JNI_VERSION_1_6;
}
