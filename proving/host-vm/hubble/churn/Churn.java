/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;

/**
 * Threads born and dying while everything else that takes ART's thread and shutdown locks goes on:
 * ROUNDS rounds of PER_ROUND short threads (each a few traced calls), a thread asking for a GC
 * every GC_MS, and one renaming itself HUBBLE:flush:churn every FLUSH_MS (a flush of every thread
 * in many-thread mode; a plain rename when Hubble is off). It times each Thread.start() call and
 * each thread's start-to-run delay (start() called to run()'s first line) and prints them as
 * "start-us" and "run-us" lines of microseconds, then "flushes N".
 *
 *   Churn [ROUNDS [PER_ROUND [FLUSH_MS [GC_MS]]]]
 */
public class Churn {
    static volatile boolean done;
    static long sink;

    @NeverInline
    static long step(long x) {
        return x * 6364136223846793005L + 1442695040888963407L;
    }

    static final class Born extends Thread {
        volatile long called;
        long delay;

        Born(int i) {
            super("born-" + i);
        }

        public void run() {
            delay = System.nanoTime() - called;
            long x = getId();
            for (int i = 0; i < 200; i++) {
                x = step(x);
            }
            sink += x;
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int perRound = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        final int flushMs = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        final int gcMs = args.length > 3 ? Integer.parseInt(args[3]) : 20;
        Thread.sleep(500);  // the control plane starts as the app starts
        final int[] flushes = new int[1];
        Thread flusher = new Thread(new Runnable() {
            public void run() {
                while (!done) {
                    Thread.currentThread().setName("HUBBLE:flush:churn");
                    Thread.currentThread().setName("flusher");
                    flushes[0]++;
                    sleep(flushMs);
                }
            }
        }, "flusher");
        Thread collector = new Thread(new Runnable() {
            public void run() {
                while (!done) {
                    Runtime.getRuntime().gc();
                    sleep(gcMs);
                }
            }
        }, "collector");
        flusher.start();
        collector.start();
        long[] startUs = new long[rounds * perRound];
        long[] runUs = new long[rounds * perRound];
        for (int r = 0; r < rounds; r++) {
            Born[] born = new Born[perRound];
            for (int i = 0; i < perRound; i++) {
                born[i] = new Born(r * perRound + i);
                born[i].called = System.nanoTime();
                born[i].start();
                startUs[r * perRound + i] = (System.nanoTime() - born[i].called) / 1000;
            }
            for (int i = 0; i < perRound; i++) {
                born[i].join();
                runUs[r * perRound + i] = born[i].delay / 1000;
            }
        }
        done = true;
        flusher.join();
        collector.join();
        StringBuilder out = new StringBuilder("start-us");
        for (long v : startUs) {
            out.append(' ').append(v);
        }
        System.out.println(out);
        out = new StringBuilder("run-us");
        for (long v : runUs) {
            out.append(' ').append(v);
        }
        System.out.println(out);
        System.out.println("flushes " + flushes[0]);
    }

    static void sleep(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            done = true;
        }
    }
}
