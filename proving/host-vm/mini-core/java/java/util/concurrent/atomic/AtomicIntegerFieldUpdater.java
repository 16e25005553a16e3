/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

/**
 * Atomic access to a volatile int field of any object of a class, through ART's Unsafe natives
 * (Fields). kotlinx-atomicfu's AtomicInt (which kotlinx-coroutines 1.0.1 uses as Debian ships
 * it) is built on it.
 */
public abstract class AtomicIntegerFieldUpdater<T> {
    protected AtomicIntegerFieldUpdater() {
    }

    public static <U> AtomicIntegerFieldUpdater<U> newUpdater(Class<U> tclass, String fieldName) {
        return new Impl<U>(tclass, fieldName);
    }

    public abstract boolean compareAndSet(T obj, int expect, int update);

    public abstract boolean weakCompareAndSet(T obj, int expect, int update);

    public abstract void set(T obj, int newValue);

    public abstract void lazySet(T obj, int newValue);

    public abstract int get(T obj);

    public int getAndSet(T obj, int newValue) {
        int prev;
        do {
            prev = get(obj);
        } while (!compareAndSet(obj, prev, newValue));
        return prev;
    }

    public int getAndAdd(T obj, int delta) {
        int prev;
        do {
            prev = get(obj);
        } while (!compareAndSet(obj, prev, prev + delta));
        return prev;
    }

    public int getAndIncrement(T obj) {
        return getAndAdd(obj, 1);
    }

    public int getAndDecrement(T obj) {
        return getAndAdd(obj, -1);
    }

    public int addAndGet(T obj, int delta) {
        return getAndAdd(obj, delta) + delta;
    }

    public int incrementAndGet(T obj) {
        return addAndGet(obj, 1);
    }

    public int decrementAndGet(T obj) {
        return addAndGet(obj, -1);
    }

    private static final class Impl<T> extends AtomicIntegerFieldUpdater<T> {
        private final Class<T> tclass;
        private final long offset;

        Impl(Class<T> tclass, String name) {
            this.tclass = tclass;
            this.offset = Fields.offset(tclass, name, Integer.TYPE);
        }

        public boolean compareAndSet(T obj, int expect, int update) {
            Fields.check(tclass, obj);
            return Fields.U.compareAndSwapInt(obj, offset, expect, update);
        }

        public boolean weakCompareAndSet(T obj, int expect, int update) {
            return compareAndSet(obj, expect, update);
        }

        public void set(T obj, int newValue) {
            Fields.check(tclass, obj);
            Fields.U.putIntVolatile(obj, offset, newValue);
        }

        public void lazySet(T obj, int newValue) {
            Fields.check(tclass, obj);
            Fields.U.putOrderedInt(obj, offset, newValue);
        }

        public int get(T obj) {
            Fields.check(tclass, obj);
            return Fields.U.getIntVolatile(obj, offset);
        }
    }
}
