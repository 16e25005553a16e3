/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;

/**
 * A call tree whose shape the program knows: each round calls top(n), which calls mid n times,
 * each mid calling leaf three times. Rounds are apart, so that in --mode jit the later ones run
 * the code the JIT compiled meanwhile; mid and leaf are never inlined (Hubble traces the methods
 * that keep their frames). The program prints its own count of each call and who calls whom,
 * asks Hubble to flush its thread through the thread-name hook, and gives the flush time.
 *
 *   Calls [N [ROUNDS [PAUSE_MS]]]
 */
public class Calls {
    static int leafCalls;
    static int midCalls;
    static int topCalls;

    @NeverInline
    static int leaf(int x) {
        leafCalls++;
        return x * 3 + 1;
    }

    @NeverInline
    static int mid(int x) {
        midCalls++;
        int s = 0;
        for (int i = 0; i < 3; i++) {
            s += leaf(x + i);
        }
        return s;
    }

    static int top(int n) {
        topCalls++;
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += mid(i);
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int pause = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        long sum = 0;
        for (int r = 0; r < rounds; r++) {
            // The first pause also lets the control thread start tracing this thread, which it
            // does as the app starts, asynchronously (an app's own code runs later than that).
            Thread.sleep(pause);
            sum += top(n);
        }
        System.out.println("sum " + sum);
        System.out.println("calls Calls.top " + topCalls);
        System.out.println("calls Calls.mid " + midCalls);
        System.out.println("calls Calls.leaf " + leafCalls);
        System.out.println("parent Calls.mid Calls.top");
        System.out.println("parent Calls.leaf Calls.mid");
        Thread.currentThread().setName("HUBBLE:flush:done");
        Thread.sleep(1500);
    }
}
