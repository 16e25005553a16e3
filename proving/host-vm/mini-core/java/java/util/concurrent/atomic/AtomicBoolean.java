/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

/** A boolean updated atomically (every write holds this object's monitor). */
public class AtomicBoolean implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private volatile boolean value;

    public AtomicBoolean() {
    }

    public AtomicBoolean(boolean initial) {
        value = initial;
    }

    public final boolean get() {
        return value;
    }

    public final synchronized void set(boolean v) {
        value = v;
    }

    public final void lazySet(boolean v) {
        set(v);
    }

    public final synchronized boolean getAndSet(boolean v) {
        boolean old = value;
        value = v;
        return old;
    }

    public final synchronized boolean compareAndSet(boolean expect, boolean update) {
        if (value != expect) {
            return false;
        }
        value = update;
        return true;
    }

    public boolean weakCompareAndSet(boolean expect, boolean update) {
        return compareAndSet(expect, update);
    }

    public String toString() {
        return value ? "true" : "false";
    }
}
