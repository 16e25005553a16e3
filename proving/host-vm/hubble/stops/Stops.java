/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;

/**
 * Stops under real suspension: WORKERS threads call work() in loops (each call a microsecond or
 * more of arithmetic, so the pool does not go round between flushes), a GC thread calls
 * Runtime.gc() (every collection suspends every thread), a sleeper spends its life in
 * Thread.sleep (not runnable: every stop of it takes the force path), and the flusher asks Hubble
 * for a flush of every thread through the thread-name hook every PERIOD_MS, FLUSHES times. Then
 * everything stops and each thread prints its own count of work() calls, which the flushed files
 * together must hold exactly. The flushes run after their requests, on the control thread: the
 * program then waits (the driver ends it once the last one, reason "end", is written).
 *
 *   Stops [WORKERS [FLUSHES [PERIOD_MS]]]
 */
public class Stops {
    static volatile boolean stop;
    static long sink;

    @NeverInline
    static long work(long x) {
        long s = x;
        for (int i = 0; i < 2000; i++) {
            s = s * 6364136223846793005L + 1442695040888963407L;
        }
        return s;
    }

    static final class Worker extends Thread {
        long calls;
        long sum;

        Worker(int i) {
            super("worker-" + i);
        }

        public void run() {
            long x = getId();
            while (!stop) {
                x = work(x);
                calls++;
            }
            sum = x;
        }
    }

    public static void main(String[] args) throws Exception {
        int workers = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int flushes = args.length > 1 ? Integer.parseInt(args[1]) : 10000;
        int period = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        Thread.sleep(300); // the control plane starts as the app starts
        Worker[] ws = new Worker[workers];
        for (int i = 0; i < workers; i++) {
            ws[i] = new Worker(i);
            ws[i].start();
        }
        final int[] gcs = new int[1];
        Thread gc = new Thread("gc-driver") {
            public void run() {
                while (!stop) {
                    Runtime.getRuntime().gc();
                    gcs[0]++;
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        };
        Thread sleeper = new Thread("sleeper") {
            public void run() {
                while (!stop) {
                    try {
                        Thread.sleep(1000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        };
        gc.start();
        sleeper.start();
        Thread flusher = Thread.currentThread();
        for (int f = 0; f < flushes; f++) {
            flusher.setName("HUBBLE:flush:s");
            Thread.sleep(period);
        }
        stop = true;
        for (Worker w : ws) {
            while (w.isAlive()) {
                Thread.sleep(10);
            }
        }
        while (gc.isAlive() || sleeper.isAlive()) {
            Thread.sleep(10);
        }
        System.out.println("work ended at " + System.currentTimeMillis());
        // The last flush after every worker ended: their records up to the end.
        flusher.setName("HUBBLE:flush:end");
        long total = 0;
        for (Worker w : ws) {
            System.out.println("calls " + w.getName() + " Stops.work " + w.calls);
            total += w.calls + (w.sum == 42 ? 1 : 0);
        }
        System.out.println("work calls " + total + ", collections " + gcs[0] + ", flushes asked "
                + (flushes + 1));
        Thread.sleep(600000);
    }
}
