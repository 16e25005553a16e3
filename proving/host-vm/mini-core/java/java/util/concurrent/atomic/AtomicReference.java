/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

/** A reference updated atomically (every write holds this object's monitor). */
public class AtomicReference<V> implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private volatile V value;

    public AtomicReference() {
    }

    public AtomicReference(V initial) {
        value = initial;
    }

    public final V get() {
        return value;
    }

    public final synchronized void set(V v) {
        value = v;
    }

    public final void lazySet(V v) {
        set(v);
    }

    public final synchronized V getAndSet(V v) {
        V old = value;
        value = v;
        return old;
    }

    public final synchronized boolean compareAndSet(V expect, V update) {
        if (value != expect) {
            return false;
        }
        value = update;
        return true;
    }

    public final boolean weakCompareAndSet(V expect, V update) {
        return compareAndSet(expect, update);
    }

    public String toString() {
        return String.valueOf(get());
    }
}
