/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

/** A int updated atomically (every access holds this object's monitor). */
public class AtomicInteger extends Number implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private volatile int value;

    public AtomicInteger() {
    }

    public AtomicInteger(int initial) {
        value = initial;
    }

    public final int get() {
        return value;
    }

    public final synchronized void set(int v) {
        value = v;
    }

    public final void lazySet(int v) {
        set(v);
    }

    public final synchronized int getAndSet(int v) {
        int old = value;
        value = v;
        return old;
    }

    public final synchronized boolean compareAndSet(int expect, int update) {
        if (value != expect) {
            return false;
        }
        value = update;
        return true;
    }

    public final boolean weakCompareAndSet(int expect, int update) {
        return compareAndSet(expect, update);
    }

    public final synchronized int getAndAdd(int delta) {
        int old = value;
        value = old + delta;
        return old;
    }

    public final synchronized int addAndGet(int delta) {
        value = value + delta;
        return value;
    }

    public final int getAndIncrement() {
        return getAndAdd(1);
    }

    public final int getAndDecrement() {
        return getAndAdd(-1);
    }

    public final int incrementAndGet() {
        return addAndGet(1);
    }

    public final int decrementAndGet() {
        return addAndGet(-1);
    }

    public int intValue() {
        return (int) get();
    }

    public long longValue() {
        return get();
    }

    public float floatValue() {
        return (float) get();
    }

    public double doubleValue() {
        return (double) get();
    }

    public String toString() {
        return Integer.toString(get());
    }
}
