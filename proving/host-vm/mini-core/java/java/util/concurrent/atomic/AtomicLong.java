/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

/** A long updated atomically (every access holds this object's monitor). */
public class AtomicLong extends Number implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private volatile long value;

    public AtomicLong() {
    }

    public AtomicLong(long initial) {
        value = initial;
    }

    public final long get() {
        return value;
    }

    public final synchronized void set(long v) {
        value = v;
    }

    public final void lazySet(long v) {
        set(v);
    }

    public final synchronized long getAndSet(long v) {
        long old = value;
        value = v;
        return old;
    }

    public final synchronized boolean compareAndSet(long expect, long update) {
        if (value != expect) {
            return false;
        }
        value = update;
        return true;
    }

    public final boolean weakCompareAndSet(long expect, long update) {
        return compareAndSet(expect, update);
    }

    public final synchronized long getAndAdd(long delta) {
        long old = value;
        value = old + delta;
        return old;
    }

    public final synchronized long addAndGet(long delta) {
        value = value + delta;
        return value;
    }

    public final long getAndIncrement() {
        return getAndAdd(1);
    }

    public final long getAndDecrement() {
        return getAndAdd(-1);
    }

    public final long incrementAndGet() {
        return addAndGet(1);
    }

    public final long decrementAndGet() {
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
        return Long.toString(get());
    }

    // @generated-members
}
