# Hubble compiler corpus, JNI stubs: one native method per stub shape the JNI
# compiler distinguishes (jni_compiler.cc): normal, @FastNative, synchronized, reference
# arguments, a reference result (decoded by the stub), long and double results, an instance
# method, and a native that returns with an exception pending. Their native code is natives.c,
# compiled for each ISA (proving/art-compile/src/jni.rs); the expected results come from
# the same functions written in Rust (tests/corpus_jni.rs).
.class public LNatives;
.super Ljava/lang/Object;

.method public static native addInts(II)I
.end method

.method public static native mixLong(JI)J
.end method

.method public static native mixDouble(DFI)D
.end method

.method public static native manyArgs(IJIDIFII)J
.end method

.method public static synchronized native syncAdd(II)I
.end method

.method public static native refArg(Ljava/lang/Object;I)I
.end method

.method public static native identity(Ljava/lang/Object;)Ljava/lang/Object;
.end method

.method public native instanceAdd(I)I
.end method

.method public static native fastAdd(II)I
    .annotation build Ldalvik/annotation/optimization/FastNative;
    .end annotation
.end method

.method public static native fastIdentity(Ljava/lang/Object;)Ljava/lang/Object;
    .annotation build Ldalvik/annotation/optimization/FastNative;
    .end annotation
.end method

.method public static native throwIfOdd(II)I
.end method
