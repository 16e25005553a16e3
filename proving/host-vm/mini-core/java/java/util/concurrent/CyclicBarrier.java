/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent;

/**
 * PARTIES threads meet: await() returns when the last arrives (it runs the barrier action
 * first), then the barrier resets. No timeouts or broken barriers beyond an interrupt.
 */
public class CyclicBarrier {
    private final int parties;
    private final Runnable action;
    private int waiting;
    private long generation;

    public CyclicBarrier(int parties, Runnable action) {
        if (parties <= 0) {
            throw new IllegalArgumentException();
        }
        this.parties = parties;
        this.action = action;
    }

    public CyclicBarrier(int parties) {
        this(parties, null);
    }

    public int getParties() {
        return parties;
    }

    /** This thread's arrival index: parties - 1 for the first, 0 for the last. */
    public synchronized int await() throws InterruptedException, BrokenBarrierException {
        int index = parties - 1 - waiting;
        if (index == 0) {
            if (action != null) {
                action.run();
            }
            waiting = 0;
            generation++;
            notifyAll();
            return 0;
        }
        waiting++;
        long g = generation;
        while (g == generation) {
            wait();
        }
        return index;
    }

    public synchronized int getNumberWaiting() {
        return waiting;
    }
}
