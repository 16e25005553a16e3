/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;

/**
 * The runtime's harder paths under tracing, each counted by the program itself:
 * - exceptions thrown two frames down and caught by their caller's caller, every third call,
 *   unwinding interpreted, nterp or JIT-compiled frames (the unwinder writes their exits);
 * - on-stack replacement in the middle of a traced loop (in --mode jit, nterp jumps into the
 *   OSR code while the loop runs: "Jumping to ... osrLoop");
 * - a class-hierarchy deoptimization of a method with a live frame: onStack's compiled code
 *   inlines Base.value() while Base has no subclass; loading Sub2 from inside the loop
 *   invalidates it and the frame goes on in the interpreter ("CHA invalidated compiled code"):
 *   its exit must be written once, which the calls of a() made from main afterwards show (their
 *   parent must be work(), not a frame left open, nor work's caller).
 * The program prints its counts and nesting, then asks Hubble to flush its thread.
 */
public class Paths {
    static int aCalls, bCalls, cCalls, leafCalls, osrCalls, onStackCalls;
    static int caught;

    @NeverInline
    static int c(int i) {
        cCalls++;
        if (i % 3 == 0) {
            throw new IllegalArgumentException();
        }
        return i + 1;
    }

    @NeverInline
    static int b(int i) {
        bCalls++;
        return c(i) * 2;
    }

    @NeverInline
    static int a(int i) {
        aCalls++;
        try {
            return b(i);
        } catch (IllegalArgumentException e) {
            caught++;
            return -1;
        }
    }

    @NeverInline
    static int leaf(int i) {
        leafCalls++;
        return i & 7;
    }

    static long osrLoop(int n) {
        osrCalls++;
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += leaf(i);
        }
        return s;
    }

    // Inlinable on purpose: the JIT inlines Base.value() into onStack under a CHA guard, which is
    // what loading Sub2 invalidates. Inlined calls are not traced, so value() is not counted.
    static class Base {
        int value() {
            return 1;
        }
    }

    static class Sub2 extends Base {
        int value() {
            return 300;
        }
    }

    static Base current = new Base();

    /** Names Sub2: verified, and Sub2 loaded, only when swap() first runs. */
    static final class Makers {
        static Base sub2() {
            return new Sub2();
        }
    }

    static void swap() {
        current = Makers.sub2();
    }

    static int onStack(int n, int swapAt) {
        onStackCalls++;
        int s = 0;
        for (int i = 0; i < n; i++) {
            if (i == swapAt) {
                swap();
            }
            s += current.value();
        }
        return s;
    }

    /** Everything traced, in one frame entered after tracing started (main's entry is older
     * than the window: the control thread starts tracing as the app starts). */
    static long work() throws InterruptedException {
        long sum = 0;
        for (int r = 0; r < 4; r++) {
            for (int i = 0; i < 3000; i++) {
                sum += a(i);
            }
            Thread.sleep(50); // the JIT compiles a, b and c meanwhile
        }
        sum += osrLoop(300000);
        // Warm onStack up with Base alone (the JIT inlines value() under a CHA guard), then once
        // with the swap inside the loop.
        // At least 1.5 s of it: the optimized compilation (the one with the CHA guard) comes
        // after the baseline one, later on a loaded machine.
        long until = System.nanoTime() + 1500000000L;
        for (int r = 0; r < 20 || System.nanoTime() < until; r++) {
            sum += onStack(2000, -1);
            Thread.sleep(20);
        }
        sum += onStack(200000, 100000);
        for (int i = 0; i < 1000; i++) {
            sum += a(i);
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        Thread.sleep(300); // the control thread starts tracing the UI thread as the app starts
        long sum = work();
        System.out.println("sum " + sum + " caught " + caught);
        System.out.println("calls Paths.a " + aCalls);
        System.out.println("calls Paths.b " + bCalls);
        System.out.println("calls Paths.c " + cCalls);
        System.out.println("calls Paths.osrLoop " + osrCalls);
        System.out.println("calls Paths.leaf " + leafCalls);
        System.out.println("calls Paths.onStack " + onStackCalls);
        System.out.println("parent Paths.b Paths.a");
        System.out.println("parent Paths.c Paths.b");
        System.out.println("parent Paths.leaf Paths.osrLoop");
        System.out.println("calls Paths.work 1");
        System.out.println("parent Paths.a Paths.work");
        System.out.println("parent Paths.osrLoop Paths.work");
        System.out.println("parent Paths.onStack Paths.work");
        Thread.currentThread().setName("HUBBLE:flush:paths");
        Thread.sleep(500);
    }
}
