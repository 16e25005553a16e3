/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;
import java.io.File;

/**
 * A small app: the UI thread ("main") draws frames, one of them slow, while three workers
 * ("worker-1".."worker-3") each run Workers.work, a call tree whose calls it counts per thread
 * (../workers/Workers.java; the UI thread runs one per frame too). Nothing in it knows
 * Hubble: the runtime's own duration trigger (debug.hubble.triggers App.doFrame>30ms=jank) must
 * flush when the slow frame ends, and the platform's ANR dump (SIGQUIT) after "done". Between
 * them, once it printed "ready", it waits for the test's go-ahead (a file "go" beside the host's
 * property file) and runs a second round on every thread, so each flush has calls of its own. It
 * prints its own count of every thread's calls over both rounds, the frame it made slow and who
 * calls whom.
 *
 *   App [N [FRAMES [SLOW [WAIT_MS]]]]
 */
public class App {
    static final int WORKERS = 3;
    static int frameCalls;
    static long sink;

    @NeverInline
    static void doFrame(int frame, int slow, int n) throws InterruptedException {
        frameCalls++;
        sink += Workers.work(0, n);
        if (frame == slow) {
            Thread.sleep(60);
        }
    }

    public static void main(String[] args) throws Exception {
        final int n = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        int frames = args.length > 1 ? Integer.parseInt(args[1]) : 12;
        int slow = args.length > 2 ? Integer.parseInt(args[2]) : 6;
        int wait = args.length > 3 ? Integer.parseInt(args[3]) : 8000;
        Thread.sleep(600);  // the control thread starts tracing the app's threads as it starts
        Thread[] workers = start(n);
        for (int f = 0; f < frames; f++) {
            doFrame(f, slow, n);
            Thread.sleep(16);
        }
        join(workers);
        System.out.println("frames " + frames + " slow " + slow);
        System.out.println("ready");
        File go = new File(new File(System.getenv("HUBBLE_PROPERTIES_FILE")).getParent(), "go");
        while (!go.exists()) {
            Thread.sleep(10);
        }
        workers = start(n);
        sink += Workers.work(0, n);
        join(workers);
        System.out.println("calls main App.doFrame " + frameCalls);
        for (int i = 0; i <= WORKERS; i++) {
            String name = Workers.name(i);
            System.out.println("calls " + name + " Workers.step " + Workers.stepCalls[i]);
            System.out.println("calls " + name + " Workers.leaf " + Workers.leafCalls[i]);
        }
        System.out.println("parent Workers.leaf Workers.step");
        System.out.println("done");
        Thread.sleep(wait);
    }

    static Thread[] start(final int n) {
        Thread[] workers = new Thread[WORKERS + 1];
        for (int i = 1; i <= WORKERS; i++) {
            final int who = i;
            workers[i] = new Thread(new Runnable() {
                public void run() {
                    for (int f = 0; f < 5; f++) {
                        sink += Workers.work(who, n * who);
                        try {
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }, Workers.name(i));
            workers[i].start();
        }
        return workers;
    }

    static void join(Thread[] workers) throws InterruptedException {
        for (int i = 1; i <= WORKERS; i++) {
            workers[i].join();
        }
    }
}
