/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;

/**
 * A thread that spins without calls while every thread is flushed (many-thread mode): a loop
 * with no call reaches no trace point and never leaves the runnable state, so neither the stop's
 * doorbell nor the force stop reaches it; only ART's checkpoint at the loop's suspend check does.
 * The daemon thread "spinner" makes STEPS traced calls, enters spin() and spins for the rest of
 * the program's life; the main thread counts on it, flushes every thread (the thread-name hook)
 * and ends while it still spins. The one trace must hold every call the spinner made, with
 * spin() still open. Without the checkpoint no trace is ever written. In --mode jit the loop runs
 * as OSR code by the time of the flush (vm-check).
 */
public class Spinner {
    static final int STEPS = 3000;
    static volatile boolean spinning;
    static int stepCalls, spinCalls;
    static long sink;

    @NeverInline
    static long step(long x) {
        stepCalls++;
        return x * 31 + 7;
    }

    @NeverInline
    static long spin(long x) {
        spinCalls++;
        spinning = true;
        while (x != 0) {  // never false: the multiplier is odd and the increment keeps it from 0
            x = (x * 6364136223846793005L + 1442695040888963407L) | 1;
        }
        return x;
    }

    static final class Loop implements Runnable {
        public void run() {
            long x = 1;
            for (int i = 0; i < STEPS; i++) {
                x = step(x);
            }
            sink = spin(x);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread.sleep(300); // the control thread starts tracing as the app starts
        Thread t = new Thread(new Loop(), "spinner");
        t.setDaemon(true);
        t.start();
        while (!spinning) {
            Thread.sleep(1);
        }
        Thread.sleep(1000); // long enough for the JIT to compile the loop and jump into it
        System.out.println("calls spinner Spinner.step " + stepCalls);
        System.out.println("calls spinner Spinner.spin " + spinCalls);
        System.out.println("parent Spinner.step Spinner$Loop.run");
        System.out.println("parent Spinner.spin Spinner$Loop.run");
        Thread.currentThread().setName("HUBBLE:flush:spinning");
        Thread.sleep(1000);
    }
}
