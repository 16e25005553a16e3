/*
 * JNI bodies for 2300-hubble-transitions (built into libarttest with the other run-test JNI
 * code: add this file to art/test/Android.bp's libarttest srcs).
 */
#include <jni.h>

extern "C" JNIEXPORT void JNICALL Java_Main_t_1nativeCalls_00024noinline_00024(
    JNIEnv* env, jclass cls, jstring callback) {
  const char* name = env->GetStringUTFChars(callback, nullptr);
  jmethodID m = env->GetStaticMethodID(cls, name, "()V");
  env->ReleaseStringUTFChars(callback, name);
  if (m != nullptr) {
    env->CallStaticVoidMethod(cls, m);  // may return with an exception pending: passed on
  }
}

extern "C" JNIEXPORT void JNICALL Java_Main_t_1nativeThrows_00024noinline_00024(JNIEnv* env,
                                                                                jclass) {
  env->ThrowNew(env->FindClass("java/lang/IllegalStateException"), "native");
}

extern "C" JNIEXPORT void JNICALL Java_Main_t_1nativeBlocks_00024noinline_00024(
    JNIEnv* env, jclass, jobject started, jobject release) {
  jclass object = env->FindClass("java/lang/Object");
  jmethodID notify_all = env->GetMethodID(object, "notifyAll", "()V");
  jmethodID wait = env->GetMethodID(object, "wait", "()V");
  env->MonitorEnter(release);  // taken before `started` is notified: no lost wake-up
  env->MonitorEnter(started);
  env->CallVoidMethod(started, notify_all);
  env->MonitorExit(started);
  env->CallVoidMethod(release, wait);  // the thread waits in Java's Object.wait, called from JNI
  env->MonitorExit(release);
}
