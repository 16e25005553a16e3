/*
 * The native side of tests/compiler-corpus/jni/Natives.smali: what the JNI stubs that ART's
 * JNI compiler makes call (ArtMethod's entry point from JNI). Compiled per ISA by clang as
 * freestanding code with no relocations (the harness copies .text and refuses an object with
 * relocations): arm64 AAPCS64, arm AAPCS with soft-float arguments (armeabi-v7a's ABI, which
 * the stub converts to from ART's hard-float managed convention), x86_64 SysV, x86 cdecl.
 *
 * Every function folds *all* it received into its result, including the JNIEnv*, the jclass
 * and the thread state the JNIEnv's Thread holds at the call, so that an argument the stub
 * put in the wrong place, or a transition it did not make, changes the result. The expected
 * values come from the same functions written in Rust (proving/art-compile/src/jni.rs).
 */
#include <stdint.h>

typedef void* JNIEnv;
typedef void* jobject;

/* JNIEnvExt::self_ follows JNIEnv's one pointer (JNIEnvExt::SelfOffset, jni_env_ext.cc). The
 * thread's state word is Thread::tls32_.state_and_flags, at offset 0. */
static uint64_t state_of(JNIEnv* env) {
  const uint32_t* thread = *(const uint32_t* const*)((const char*)env + sizeof(void*));
  return *thread;
}

static uint64_t fold(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ull;
}

static uint64_t start(JNIEnv* env, void* cls) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = fold(h, (uint64_t)(uintptr_t)env);
  h = fold(h, (uint64_t)(uintptr_t)cls);
  return fold(h, state_of(env));
}

/* A jobject the stub made from a reference argument points to the reference's spill slot;
 * null stays null. */
static uint64_t deref(jobject o) {
  return o == 0 ? 0xffffffffffull : *(const uint32_t*)o;
}

static uint64_t bits_d(double d) {
  union { double d; uint64_t u; } x = {d};
  return x.u;
}

static uint64_t bits_f(float f) {
  union { float f; uint32_t u; } x = {f};
  return x.u;
}

int32_t Natives_addInts(JNIEnv* env, void* cls, int32_t a, int32_t b) {
  return (int32_t)fold(fold(start(env, cls), (uint32_t)a), (uint32_t)b);
}

int64_t Natives_mixLong(JNIEnv* env, void* cls, int64_t a, int32_t b) {
  return (int64_t)fold(fold(start(env, cls), (uint64_t)a), (uint32_t)b);
}

double Natives_mixDouble(JNIEnv* env, void* cls, double a, float b, int32_t c) {
  uint64_t h = fold(fold(fold(start(env, cls), bits_d(a)), bits_f(b)), (uint32_t)c);
  /* An int32 converts exactly, with one instruction on every ISA (no runtime helper). */
  return (double)(int32_t)(h ^ (h >> 32));
}

int64_t Natives_manyArgs(JNIEnv* env, void* cls, int32_t a, int64_t b, int32_t c, double d,
                         int32_t e, float f, int32_t g, int32_t i) {
  uint64_t h = start(env, cls);
  h = fold(h, (uint32_t)a);
  h = fold(h, (uint64_t)b);
  h = fold(h, (uint32_t)c);
  h = fold(h, bits_d(d));
  h = fold(h, (uint32_t)e);
  h = fold(h, bits_f(f));
  h = fold(h, (uint32_t)g);
  return (int64_t)fold(h, (uint32_t)i);
}

int32_t Natives_syncAdd(JNIEnv* env, void* cls, int32_t a, int32_t b) {
  return (int32_t)fold(fold(start(env, cls), (uint32_t)a), (uint32_t)b);
}

int32_t Natives_refArg(JNIEnv* env, void* cls, jobject o, int32_t a) {
  return (int32_t)fold(fold(start(env, cls), deref(o)), (uint32_t)a);
}

/* Returns the jobject it was given: the stub decodes it back to the reference. */
jobject Natives_identity(JNIEnv* env, void* cls, jobject o) {
  (void)env;
  (void)cls;
  return o;
}

int32_t Natives_instanceAdd(JNIEnv* env, jobject self, int32_t a) {
  return (int32_t)fold(fold(start(env, 0), deref(self)), (uint32_t)a);
}

int32_t Natives_fastAdd(JNIEnv* env, void* cls, int32_t a, int32_t b) {
  return (int32_t)fold(fold(start(env, cls), (uint32_t)a), (uint32_t)b);
}

jobject Natives_fastIdentity(JNIEnv* env, void* cls, jobject o) {
  (void)env;
  (void)cls;
  return o;
}

/* Leaves an exception pending when `a` is odd, as a native that calls JNIEnv::Throw does:
 * the Thread's exception field (its offset is the second argument, Thread::ExceptionOffset)
 * gets a non-null reference. */
int32_t Natives_throwIfOdd(JNIEnv* env, void* cls, int32_t a, int32_t exception_offset) {
  if (a & 1) {
    char* thread = *(char* const*)((const char*)env + sizeof(void*));
    *(void**)(thread + exception_offset) = (void*)(uintptr_t)0x7e57;
  }
  return (int32_t)fold(start(env, cls), (uint32_t)a);
}
