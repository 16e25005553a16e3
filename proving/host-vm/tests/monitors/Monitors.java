/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * Eight threads and monitors: synchronized methods (instance and static) and blocks, reentrant
 * locking, contended counters, a bounded buffer with wait/notifyAll (4 producers, 4 consumers),
 * a token passed round a ring of 8 threads in a fixed order with wait/notifyAll, a semaphore built
 * on wait/notify (one waiter woken at a time), a barrier, timed wait, interrupt of a waiting
 * thread, and join. Every result is deterministic: counts, checksums and the ring's order.
 */
public class Monitors {
    static final int THREADS = 8;

    // ---- contended counters
    static int staticCount;
    int count;

    synchronized void inc() {
        count++;
    }

    static synchronized void staticInc() {
        staticCount++;
    }

    synchronized void incTwiceReentrant() {
        inc();
        synchronized (this) {
            count++;
        }
    }

    // ---- bounded buffer
    static final class Buffer {
        private final long[] items = new long[16];
        private int head, tail, size;

        synchronized void put(long v) throws InterruptedException {
            while (size == items.length) {
                wait();
            }
            items[tail] = v;
            tail = (tail + 1) % items.length;
            size++;
            notifyAll();
        }

        synchronized long take() throws InterruptedException {
            while (size == 0) {
                wait();
            }
            long v = items[head];
            head = (head + 1) % items.length;
            size--;
            notifyAll();
            return v;
        }
    }

    // ---- semaphore on wait/notify
    static final class Semaphore {
        private int permits;
        private int inside, maxInside;

        Semaphore(int permits) {
            this.permits = permits;
        }

        synchronized void acquire() throws InterruptedException {
            while (permits == 0) {
                wait();
            }
            permits--;
            inside++;
            maxInside = Math.max(maxInside, inside);
        }

        synchronized void release() {
            inside--;
            permits++;
            notify();
        }
    }

    // ---- barrier
    static final class Barrier {
        private final int parties;
        private int waiting, generation;

        Barrier(int parties) {
            this.parties = parties;
        }

        synchronized int await() throws InterruptedException {
            int gen = generation;
            if (++waiting == parties) {
                waiting = 0;
                generation++;
                notifyAll();
                return gen;
            }
            while (gen == generation) {
                wait();
            }
            return gen;
        }
    }

    static Thread[] startAll(Runnable[] bodies, String prefix) {
        Thread[] ts = new Thread[bodies.length];
        for (int i = 0; i < bodies.length; i++) {
            ts[i] = new Thread(bodies[i], prefix + i);
            ts[i].start();
        }
        return ts;
    }

    static void joinAll(Thread[] ts) throws InterruptedException {
        for (Thread t : ts) {
            t.join();
        }
    }

    static int alive(Thread[] ts) {
        int n = 0;
        for (Thread t : ts) {
            n += t.isAlive() ? 1 : 0;
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        // 1. Contended counters.
        final Monitors m = new Monitors();
        final Object blockLock = new Object();
        final long[] blockSum = new long[1];
        Runnable[] counters = new Runnable[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            counters[t] = new Runnable() {
                public void run() {
                    for (int i = 0; i < 20000; i++) {
                        m.inc();
                        staticInc();
                        if ((i & 7) == 0) {
                            m.incTwiceReentrant();
                        }
                        synchronized (blockLock) {
                            blockSum[0] += id * 100000L + i;
                        }
                    }
                }
            };
        }
        Thread[] ts = startAll(counters, "counter-");
        joinAll(ts);
        System.out.println("counters " + m.count + " " + staticCount + " " + blockSum[0] + " alive "
                + alive(ts));

        // 2. Bounded buffer: 4 producers, 4 consumers.
        final Buffer buf = new Buffer();
        final long[] consumed = new long[4];
        final long[] consumedCount = new long[4];
        Runnable[] pc = new Runnable[THREADS];
        for (int t = 0; t < 4; t++) {
            final int id = t;
            pc[t] = new Runnable() {
                public void run() {
                    try {
                        for (int i = 1; i <= 5000; i++) {
                            buf.put(id * 1000000L + i);
                        }
                        buf.put(-1);
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            };
            pc[t + 4] = new Runnable() {
                public void run() {
                    try {
                        long v;
                        while ((v = buf.take()) != -1) {
                            consumed[id] += v;
                            consumedCount[id]++;
                        }
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            };
        }
        ts = startAll(pc, "pc-");
        joinAll(ts);
        long sum = 0, cnt = 0;
        for (int i = 0; i < 4; i++) {
            sum += consumed[i];
            cnt += consumedCount[i];
        }
        System.out.println("buffer items " + cnt + " checksum " + sum + " alive " + alive(ts));

        // 3. A token round a ring of 8 threads, 5 times, in order.
        final Object ring = new Object();
        final int[] token = new int[1];
        final StringBuilder order = new StringBuilder();
        Runnable[] ringBodies = new Runnable[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            ringBodies[t] = new Runnable() {
                public void run() {
                    for (int round = 0; round < 5; round++) {
                        synchronized (ring) {
                            while (token[0] != id) {
                                try {
                                    ring.wait();
                                } catch (InterruptedException e) {
                                    throw new RuntimeException(e);
                                }
                            }
                            order.append(id);
                            token[0] = (id + 1) % THREADS;
                            ring.notifyAll();
                        }
                    }
                }
            };
        }
        ts = startAll(ringBodies, "ring-");
        joinAll(ts);
        System.out.println("ring " + order);

        // 4. A semaphore with 3 permits and notify(): never more than 3 inside.
        final Semaphore sem = new Semaphore(3);
        final int[] work = new int[1];
        Runnable[] semBodies = new Runnable[THREADS];
        for (int t = 0; t < THREADS; t++) {
            semBodies[t] = new Runnable() {
                public void run() {
                    try {
                        for (int i = 0; i < 200; i++) {
                            sem.acquire();
                            try {
                                synchronized (work) {
                                    work[0]++;
                                }
                                if ((i & 31) == 0) {
                                    Thread.yield();
                                }
                            } finally {
                                sem.release();
                            }
                        }
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            };
        }
        ts = startAll(semBodies, "sem-");
        joinAll(ts);
        System.out.println("semaphore work " + work[0] + " max inside<=3 " + (sem.maxInside <= 3)
                + " permits " + sem.permits);

        // 5. A barrier: 8 threads, 10 phases; each phase's sum is checked after the barrier.
        final Barrier barrier = new Barrier(THREADS);
        final int[] phaseValues = new int[THREADS];
        final int[] mismatches = new int[1];
        final int[] generations = new int[THREADS];
        Runnable[] barrierBodies = new Runnable[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            barrierBodies[t] = new Runnable() {
                public void run() {
                    try {
                        for (int phase = 0; phase < 10; phase++) {
                            synchronized (phaseValues) {
                                phaseValues[id] = phase;
                            }
                            generations[id] += barrier.await();
                            synchronized (phaseValues) {
                                for (int v : phaseValues) {
                                    if (v < phase) {
                                        mismatches[0]++;
                                    }
                                }
                            }
                            barrier.await();
                        }
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            };
        }
        ts = startAll(barrierBodies, "barrier-");
        joinAll(ts);
        System.out.println("barrier generations " + barrier.generation + " mismatches "
                + mismatches[0] + " thread0 gens " + generations[0]);

        // 6. Timed wait returns; an interrupted waiter gets InterruptedException.
        final Object lone = new Object();
        long t0 = System.nanoTime();
        synchronized (lone) {
            lone.wait(50);
        }
        long waitedMs = (System.nanoTime() - t0) / 1000000;
        final String[] waiterSaw = new String[1];
        Thread waiter = new Thread(new Runnable() {
            public void run() {
                synchronized (lone) {
                    try {
                        lone.wait();
                        waiterSaw[0] = "woke without interrupt";
                    } catch (InterruptedException e) {
                        waiterSaw[0] = "InterruptedException, interrupted now "
                                + Thread.currentThread().isInterrupted();
                    }
                }
            }
        }, "waiter");
        waiter.start();
        Thread.sleep(100);
        waiter.interrupt();
        waiter.join();
        System.out.println("timed wait >= 45 ms " + (waitedMs >= 45) + "; waiter: " + waiterSaw[0]);

        // 7. notify with nobody waiting, and wait without the monitor.
        synchronized (lone) {
            lone.notify();
            lone.notifyAll();
        }
        try {
            lone.wait();
        } catch (IllegalMonitorStateException e) {
            System.out.println("wait without the monitor: IllegalMonitorStateException");
        }
        try {
            lone.notify();
        } catch (IllegalMonitorStateException e) {
            System.out.println("notify without the monitor: IllegalMonitorStateException");
        }
    }
}
