/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.annotation.optimization.FastNative;
import dalvik.system.VMRuntime;
import dalvik.system.VMStack;
import java.io.FileOutputStream;
import java.io.PrintStream;

/**
 * Standard streams, time, properties and array copying. arraycopy and its typed variants are ART
 * intrinsics; the *Unchecked copies and arraycopy(Object...) are ART natives
 * (runtime/native/java_lang_System.cc). Time and exit are mini-core natives
 * (proving/host-vm/native/core_natives.cc).
 */
public final class System {
    public static final PrintStream out = new PrintStream(new FileOutputStream(1), true);
    public static final PrintStream err = new PrintStream(new FileOutputStream(2), true);

    private static String[] propertyKeys;
    private static String[] propertyValues;
    private static int propertyCount;

    private System() {
    }

    @FastNative
    public static native void arraycopy(Object src, int srcPos, Object dst, int dstPos, int length);

    private static void checkCopy(int srcLength, int srcPos, int dstLength, int dstPos, int length) {
        if (srcPos < 0 || dstPos < 0 || length < 0 || srcPos > srcLength - length
                || dstPos > dstLength - length) {
            throw new ArrayIndexOutOfBoundsException("src.length=" + srcLength + " srcPos=" + srcPos
                    + " dst.length=" + dstLength + " dstPos=" + dstPos + " length=" + length);
        }
    }

    public static void arraycopy(char[] src, int srcPos, char[] dst, int dstPos, int length) {
        if (src == null || dst == null) {
            throw new NullPointerException(src == null ? "src == null" : "dst == null");
        }
        checkCopy(src.length, srcPos, dst.length, dstPos, length);
        arraycopyCharUnchecked(src, srcPos, dst, dstPos, length);
    }

    public static void arraycopy(byte[] src, int srcPos, byte[] dst, int dstPos, int length) {
        if (src == null || dst == null) {
            throw new NullPointerException(src == null ? "src == null" : "dst == null");
        }
        checkCopy(src.length, srcPos, dst.length, dstPos, length);
        arraycopyByteUnchecked(src, srcPos, dst, dstPos, length);
    }

    public static void arraycopy(int[] src, int srcPos, int[] dst, int dstPos, int length) {
        if (src == null || dst == null) {
            throw new NullPointerException(src == null ? "src == null" : "dst == null");
        }
        checkCopy(src.length, srcPos, dst.length, dstPos, length);
        arraycopyIntUnchecked(src, srcPos, dst, dstPos, length);
    }

    public static native long currentTimeMillis();

    public static native long nanoTime();

    public static int identityHashCode(Object o) {
        return o == null ? 0 : Object.identityHashCodeNative(o);
    }

    public static void exit(int status) {
        Runtime.getRuntime().exit(status);
    }

    public static void gc() {
        Runtime.getRuntime().gc();
    }

    public static void runFinalization() {
    }

    public static void load(String filename) {
        Runtime.getRuntime().load0(VMStack.getStackClass1(), filename);
    }

    public static void loadLibrary(String libname) {
        Runtime.getRuntime().loadLibrary0(VMStack.getStackClass1(), libname);
    }

    public static String mapLibraryName(String libname) {
        return "lib" + libname + ".so";
    }

    public static String lineSeparator() {
        return "\n";
    }

    public static native String getenv(String name);

    private static synchronized void initProperties() {
        if (propertyKeys != null) {
            return;
        }
        propertyKeys = new String[32];
        propertyValues = new String[32];
        VMRuntime vm = VMRuntime.getRuntime();
        put("file.separator", "/");
        put("path.separator", ":");
        put("line.separator", "\n");
        put("file.encoding", "UTF-8");
        put("java.class.path", vm.classPath());
        put("java.boot.class.path", vm.bootClassPath());
        put("java.vm.name", "Dalvik");
        put("java.vm.version", vm.vmVersion());
        put("java.vm.vendor", "The Android Project");
        put("java.vendor", "Hubble for AOSP mini-core");
        put("java.version", "0");
        put("java.specification.version", "0.9");
        put("os.arch", vm.vmInstructionSet());
        put("os.name", "Linux");
        String dir = getenv("PWD");
        put("user.dir", dir != null ? dir : "/");
        String home = getenv("HOME");
        put("user.home", home != null ? home : "/");
        put("java.io.tmpdir", "/tmp");
        String[] fromVm = vm.properties();
        if (fromVm != null) {
            for (String kv : fromVm) {
                if (kv == null) {
                    continue;
                }
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
        }
    }

    private static void put(String key, String value) {
        for (int i = 0; i < propertyCount; i++) {
            if (propertyKeys[i].equals(key)) {
                propertyValues[i] = value;
                return;
            }
        }
        if (propertyCount == propertyKeys.length) {
            String[] k = new String[propertyCount * 2];
            String[] v = new String[propertyCount * 2];
            arraycopy(propertyKeys, 0, k, 0, propertyCount);
            arraycopy(propertyValues, 0, v, 0, propertyCount);
            propertyKeys = k;
            propertyValues = v;
        }
        propertyKeys[propertyCount] = key;
        propertyValues[propertyCount] = value;
        propertyCount++;
    }

    public static String getProperty(String key) {
        return getProperty(key, null);
    }

    public static synchronized String getProperty(String key, String defaultValue) {
        initProperties();
        for (int i = 0; i < propertyCount; i++) {
            if (propertyKeys[i].equals(key)) {
                return propertyValues[i];
            }
        }
        return defaultValue;
    }

    public static synchronized String setProperty(String key, String value) {
        String old = getProperty(key);
        put(key, value);
        return old;
    }

    // @generated-members
}
