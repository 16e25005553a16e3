/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

/**
 * Atomic access to a volatile long field of any object of a class, through ART's Unsafe natives
 * (Fields). kotlinx-atomicfu's AtomicLong (which kotlinx-coroutines 1.0.1 uses as Debian ships
 * it) is built on it.
 */
public abstract class AtomicLongFieldUpdater<T> {
    protected AtomicLongFieldUpdater() {
    }

    public static <U> AtomicLongFieldUpdater<U> newUpdater(Class<U> tclass, String fieldName) {
        return new Impl<U>(tclass, fieldName);
    }

    public abstract boolean compareAndSet(T obj, long expect, long update);

    public abstract boolean weakCompareAndSet(T obj, long expect, long update);

    public abstract void set(T obj, long newValue);

    public abstract void lazySet(T obj, long newValue);

    public abstract long get(T obj);

    public long getAndSet(T obj, long newValue) {
        long prev;
        do {
            prev = get(obj);
        } while (!compareAndSet(obj, prev, newValue));
        return prev;
    }

    public long getAndAdd(T obj, long delta) {
        long prev;
        do {
            prev = get(obj);
        } while (!compareAndSet(obj, prev, prev + delta));
        return prev;
    }

    public long getAndIncrement(T obj) {
        return getAndAdd(obj, 1);
    }

    public long getAndDecrement(T obj) {
        return getAndAdd(obj, -1);
    }

    public long addAndGet(T obj, long delta) {
        return getAndAdd(obj, delta) + delta;
    }

    public long incrementAndGet(T obj) {
        return addAndGet(obj, 1);
    }

    public long decrementAndGet(T obj) {
        return addAndGet(obj, -1);
    }

    private static final class Impl<T> extends AtomicLongFieldUpdater<T> {
        private final Class<T> tclass;
        private final long offset;

        Impl(Class<T> tclass, String name) {
            this.tclass = tclass;
            this.offset = Fields.offset(tclass, name, Long.TYPE);
        }

        public boolean compareAndSet(T obj, long expect, long update) {
            Fields.check(tclass, obj);
            return Fields.U.compareAndSwapLong(obj, offset, expect, update);
        }

        public boolean weakCompareAndSet(T obj, long expect, long update) {
            return compareAndSet(obj, expect, update);
        }

        public void set(T obj, long newValue) {
            Fields.check(tclass, obj);
            Fields.U.putLongVolatile(obj, offset, newValue);
        }

        public void lazySet(T obj, long newValue) {
            Fields.check(tclass, obj);
            Fields.U.putOrderedLong(obj, offset, newValue);
        }

        public long get(T obj) {
            Fields.check(tclass, obj);
            return Fields.U.getLongVolatile(obj, offset);
        }
    }
}
