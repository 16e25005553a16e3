/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.system;

import dalvik.annotation.optimization.FastNative;
import java.util.function.Consumer;

/** The runtime's own controls; the natives are ART's (runtime/native/dalvik_system_VMRuntime.cc). */
public final class VMRuntime {
    private static final VMRuntime THE_ONE = new VMRuntime();

    private static Consumer<String> nonSdkApiUsageConsumer;

    private VMRuntime() {
    }

    public static VMRuntime getRuntime() {
        return THE_ONE;
    }

    /** ART reports hidden-API use here (WellKnownClasses); mini-core has no hidden API. */
    public static void hiddenApiUsed(int sampledValue, String appPackageName, String member,
            int accessMethod, boolean accessDenied) {
    }

    public static void setNonSdkApiUsageConsumer(Consumer<String> consumer) {
        nonSdkApiUsageConsumer = consumer;
    }

    public native String[] properties();

    public native String bootClassPath();

    public native String classPath();

    public native String vmVersion();

    public native String vmLibrary();

    public native String vmInstructionSet();

    @FastNative
    public native boolean is64Bit();

    @FastNative
    public native boolean isCheckJniEnabled();

    public native boolean isJavaDebuggable();

    public native void trimHeap();

    public native void requestConcurrentGC();

    public native void runHeapTasks();

    public native void startHeapTaskProcessor();

    public native void stopHeapTaskProcessor();

    @FastNative
    public native Object newNonMovableArray(Class<?> componentType, int length);

    @FastNative
    public native Object newUnpaddedArray(Class<?> componentType, int minLength);

    @FastNative
    public native long addressOf(Object array);

    // @generated-members
}
