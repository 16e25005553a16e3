/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;

/**
 * The main thread and four workers ("worker-1".."worker-4") each run a call tree of a size the
 * program knows: work(who, n) calls step n times, each step calls leaf twice. It prints its own
 * count of each thread's calls, then "ready", and stays alive while the test flushes it from
 * outside (a debug.hubble.ctl property, SIGQUIT); the workers are gone by then.
 *
 *   Workers [N [WAIT_MS]]
 */
public class Workers {
    static final int THREADS = 4;
    static final int[] stepCalls = new int[THREADS + 1];
    static final int[] leafCalls = new int[THREADS + 1];

    @NeverInline
    static int leaf(int who, int x) {
        leafCalls[who]++;
        return x + 1;
    }

    @NeverInline
    static int step(int who, int x) {
        stepCalls[who]++;
        return leaf(who, x) + leaf(who, x + 1);
    }

    static long work(int who, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += step(who, i);
        }
        return s;
    }

    static String name(int who) {
        return who == 0 ? "main" : "worker-" + who;
    }

    public static void main(String[] args) throws Exception {
        final int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int wait = args.length > 1 ? Integer.parseInt(args[1]) : 8000;
        Thread.sleep(500);  // the control thread starts tracing as the app starts
        Thread[] workers = new Thread[THREADS + 1];
        for (int i = 1; i <= THREADS; i++) {
            final int who = i;
            workers[i] = new Thread(new Runnable() {
                public void run() {
                    work(who, n * who);
                }
            }, name(i));
            workers[i].start();
        }
        long sum = work(0, n);
        for (int i = 1; i <= THREADS; i++) {
            workers[i].join();
        }
        System.out.println("sum " + sum);
        for (int i = 0; i <= THREADS; i++) {
            System.out.println("calls " + name(i) + " Workers.step " + stepCalls[i]);
            System.out.println("calls " + name(i) + " Workers.leaf " + leafCalls[i]);
        }
        System.out.println("parent Workers.leaf Workers.step");
        System.out.println("ready");
        Thread.sleep(wait);
    }
}
