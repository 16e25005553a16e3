/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * ART's SIGQUIT thread dump. tests/run (the sigquit file) sends SIGQUIT to this run's dalvikvm
 * once "waiting for SIGQUIT" is printed; ART's signal catcher thread (runtime/signal_catcher.cc)
 * dumps every thread ("----- pid N at DATE -----", then each thread's state and stack, "-----
 * end N -----"), logged at INFO on this host (libartpalette's fake PaletteWriteCrashThreadStacks):
 * expected-log.txt wants the main thread sleeping in waitHere, called from main, and a second
 * thread of ours parked in a monitor wait. The program then sleeps out its time and ends as usual.
 */
public class SigQuit {
    static final Object lock = new Object();
    static boolean release;

    static void waitHere(long millis) throws InterruptedException {
        long end = System.nanoTime() + millis * 1000000L;
        while (System.nanoTime() < end) {
            Thread.sleep(50);
        }
    }

    public static void main(String[] args) throws Exception {
        Thread parked = new Thread(new Runnable() {
            public void run() {
                synchronized (lock) {
                    while (!release) {
                        try {
                            lock.wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }
        }, "parked-worker");
        parked.start();
        System.out.println("waiting for SIGQUIT");
        waitHere(4000);
        synchronized (lock) {
            release = true;
            lock.notifyAll();
        }
        parked.join();
        System.out.println("done, exiting normally");
    }
}
