/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * JNI with a user library: jni_test.c, built by tests/run into libjni.so and given to art-run
 * with the dex (the program finds its path, as the VM sees it, in java.class.path), loaded with
 * System.load. JNI_OnLoad runs once and registers add() with RegisterNatives; the other natives
 * are bound by name. They take and return primitives of every kind, arrays (written back),
 * strings, objects (fields, constructors), call back into Java (instance and static), throw to
 * Java, catch a Java exception in C, and keep a global reference across collections. A native
 * is also made hot (in --mode jit, its caller is compiled and calls it through the JIT's JNI
 * stub path). Loading the library again is a no-op (no second JNI_OnLoad).
 */
public class JniTest {
    static native int add(int a, int b);

    static native int onLoadCalls();

    static native long sum(int[] array);

    static native String greet(String name);

    static native int callBack(JniTest obj, int x);

    static native Counter bump(Counter c);

    static native void throwFromC(String message);

    static native String catchInC();

    static native void save(Object o);

    static native Object saved();

    static native double mix(long l, double d, float f, boolean z, char c, byte b, short s);

    static final class Counter {
        int value;

        Counter(int value) {
            this.value = value;
        }
    }

    int twice(int x) {
        return 2 * x;
    }

    static int plusOne(int x) {
        return x + 1;
    }

    static void thrower() {
        throw new IllegalStateException("from Java");
    }

    static String library() {
        for (String p : System.getProperty("java.class.path").split(":")) {
            if (p.endsWith("/libjni.so")) {
                return p;
            }
        }
        throw new IllegalStateException("no libjni.so in " + System.getProperty("java.class.path"));
    }

    static long hot(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += add(i, 1);
        }
        return s;
    }

    public static void main(String[] args) {
        try {
            add(1, 2);
            System.out.println("add before load: no error?");
        } catch (UnsatisfiedLinkError e) {
            System.out.println("before System.load: UnsatisfiedLinkError");
        }
        String lib = library();
        System.load(lib);
        System.load(lib);
        System.out.println("loaded, JNI_OnLoad calls " + onLoadCalls());
        System.out.println("add " + add(40, 2) + " " + add(Integer.MAX_VALUE, 1));
        int[] arr = {1, 2, 3, 4, 5};
        System.out.println("sum " + sum(arr) + ", written back " + arr[0] + "," + arr[4]);
        System.out.println(greet("ART") + " | " + greet("caf\u00e9"));
        System.out.println("callBack " + callBack(new JniTest(), 20));
        Counter c = new Counter(7);
        Counter made = bump(c);
        System.out.println("bump: field now " + c.value + ", new object " + made.value + " "
                + made.getClass().getName());
        try {
            throwFromC("bad argument");
            System.out.println("no exception");
        } catch (IllegalArgumentException e) {
            System.out.println("from C: " + e.getClass().getName() + ": " + e.getMessage());
        }
        System.out.println(catchInC());
        save(new StringBuilder("kept by a global reference"));
        System.gc();
        Runtime.getRuntime().gc();
        System.out.println("saved: " + saved());
        System.out.println("mix " + mix(1L << 40, 0.25, 1.5f, true, 'A', (byte) -2, (short) 300));
        System.out.println("hot " + hot(200000));
    }
}
