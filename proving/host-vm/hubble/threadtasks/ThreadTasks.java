/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;

/**
 * Task records on the real VM (debug.hubble.tasks=1, many-thread mode): the main thread starts
 * THREADS threads one after the other, each calls work() ROUNDS times, and main joins them. Each
 * Thread.start() writes a submit record and each Thread.run() a begin record, the thread known by
 * its id (Thread.tid: start() and join() lock the Thread, so hashing it would inflate them), the
 * one flush of every thread must hold the calls the program counted, and `hubble tasks` must pair
 * every start with its run (check_tasks.py).
 */
public class ThreadTasks {
    static final int THREADS = 6;
    static final int ROUNDS = 500;
    static final int[] calls = new int[THREADS];

    @NeverInline
    static int work(int who, int x) {
        calls[who]++;
        return x * 31 + who;
    }

    /** A Runnable, not a Thread subclass: Thread.run() (the begin record's method) runs it. */
    static final class Worker implements Runnable {
        final int who;
        int sum;

        Worker(int who) {
            this.who = who;
        }

        public void run() {
            int x = who;
            for (int i = 0; i < ROUNDS; i++) {
                x = work(who, x);
            }
            sum = x;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread.sleep(300); // the control thread starts tracing (and task records) as the app starts
        Worker[] ws = new Worker[THREADS];
        Thread[] ts = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++) {
            ws[i] = new Worker(i);
            ts[i] = new Thread(ws[i], "task-" + i);
            ts[i].start();
        }
        long check = 0;
        for (int i = 0; i < THREADS; i++) {
            ts[i].join();
            check += ws[i].sum;
        }
        System.err.println("checksum " + check);
        int total = 0;
        for (int i = 0; i < THREADS; i++) {
            System.out.println("calls task-" + i + " ThreadTasks.work " + calls[i]);
            total += calls[i];
        }
        System.out.println("calls ThreadTasks.work " + total);
        System.out.println("parent ThreadTasks.work ThreadTasks$Worker.run");
        System.out.println("parent ThreadTasks$Worker.run java.lang.Thread.run");
        System.out.println("tasks " + THREADS);
        Thread.currentThread().setName("HUBBLE:flush:tasks");
        Thread.sleep(500);
    }
}
