/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.locks;

/** A lock its owner may take again, kept under this object's monitor (fairness ignored). */
public class ReentrantLock implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private Thread owner;
    private int holds;

    public ReentrantLock() {
    }

    public ReentrantLock(boolean fair) {
    }

    public synchronized void lock() {
        Thread me = Thread.currentThread();
        boolean interrupted = false;
        while (owner != null && owner != me) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        owner = me;
        holds++;
        if (interrupted) {
            me.interrupt();
        }
    }

    public synchronized boolean tryLock() {
        Thread me = Thread.currentThread();
        if (owner != null && owner != me) {
            return false;
        }
        owner = me;
        holds++;
        return true;
    }

    public synchronized void unlock() {
        if (owner != Thread.currentThread()) {
            throw new IllegalMonitorStateException();
        }
        if (--holds == 0) {
            owner = null;
            notifyAll();
        }
    }

    public synchronized boolean isHeldByCurrentThread() {
        return owner == Thread.currentThread();
    }
}
