/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.FastNative;
import dalvik.annotation.optimization.NeverInline;

/**
 * JNI and threads under Hubble in many-thread mode: sixteen threads ("t-1".."t-16"), started in
 * two waves while tracing runs and ended before the flush, and the main thread each call a
 * normal native, a @FastNative one and a native that calls back into Java (natives.c, loaded
 * with System.load). Every method counts its own calls per thread; the one flush of every
 * thread (the thread-name hook) must hold exactly those, the natives as frames of their own
 * (the generic JNI trampoline in the interpreters, the JIT's compiled JNI stubs) with the Java
 * callback nested inside the native that made it.
 */
public class Natives {
    static final int THREADS = 16;
    static final int ROUNDS = 2000;
    static final int STEP = 0, ADD = 1, FAST = 2, CALL_BACK = 3, INNER = 4;
    static final String[] NAMES = {"step", "add", "fastAdd", "callBack", "inner"};
    static final int[][] counts = new int[THREADS + 1][NAMES.length];

    static native int add(int a, int b);

    @FastNative
    static native int fastAdd(int a, int b);

    /** Calls inner(who, x) through JNI's CallStaticIntMethod. */
    static native int callBack(int who, int x);

    @NeverInline
    static int inner(int who, int x) {
        counts[who][INNER]++;
        return 3 * x;
    }

    @NeverInline
    static int step(int who, int x) {
        counts[who][STEP]++;
        counts[who][ADD]++;
        int s = add(x, 1);
        counts[who][FAST]++;
        s += fastAdd(x, 2);
        if (x % 2 == 0) {
            counts[who][CALL_BACK]++;
            s += callBack(who, x);
        }
        return s;
    }

    static long work(int who, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += step(who, i);
        }
        return s;
    }

    static String library() {
        for (String p : System.getProperty("java.class.path").split(":")) {
            if (p.endsWith("/libnatives.so")) {
                return p;
            }
        }
        throw new IllegalStateException("no libnatives.so in " + System.getProperty("java.class.path"));
    }

    static Thread[] wave(int first, int n, final long[] sums) {
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int who = first + i;
            threads[i] = new Thread(new Runnable() {
                public void run() {
                    sums[who] = work(who, ROUNDS + 10 * who);
                }
            }, "t-" + who);
            threads[i].start();
        }
        return threads;
    }

    public static void main(String[] args) throws InterruptedException {
        Thread.sleep(300); // the control thread starts tracing as the app starts
        System.load(library());
        long[] sums = new long[THREADS + 1];
        sums[0] = work(0, ROUNDS);
        Thread[] first = wave(1, THREADS / 2, sums);
        for (Thread t : first) {
            t.join();
        }
        Thread[] second = wave(THREADS / 2 + 1, THREADS / 2, sums);
        for (Thread t : second) {
            t.join();
        }
        long check = 0;
        for (long s : sums) {
            check += s;
        }
        System.err.println("checksum " + check);
        for (int m = 0; m < NAMES.length; m++) {
            int total = 0;
            for (int who = 0; who <= THREADS; who++) {
                total += counts[who][m];
                if (who > 0) {
                    System.out.println("calls t-" + who + " Natives." + NAMES[m] + " " + counts[who][m]);
                }
            }
            System.out.println("calls Natives." + NAMES[m] + " " + total);
        }
        System.out.println("parent Natives.add Natives.step");
        System.out.println("parent Natives.fastAdd Natives.step");
        System.out.println("parent Natives.callBack Natives.step");
        System.out.println("parent Natives.inner Natives.callBack");
        Thread.currentThread().setName("HUBBLE:flush:natives");
        Thread.sleep(500);
    }
}
