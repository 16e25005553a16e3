/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

/**
 * Atomic access to a volatile reference field of any object of a class, through ART's Unsafe
 * natives (Fields). kotlin.coroutines.SafeContinuation (kotlin-stdlib) and kotlinx-atomicfu's
 * AtomicRef are built on it.
 */
public abstract class AtomicReferenceFieldUpdater<T, V> {
    protected AtomicReferenceFieldUpdater() {
    }

    public static <U, W> AtomicReferenceFieldUpdater<U, W> newUpdater(Class<U> tclass, Class<W> vclass,
            String fieldName) {
        return new Impl<U, W>(tclass, vclass, fieldName);
    }

    public abstract boolean compareAndSet(T obj, V expect, V update);

    public abstract boolean weakCompareAndSet(T obj, V expect, V update);

    public abstract void set(T obj, V newValue);

    public abstract void lazySet(T obj, V newValue);

    public abstract V get(T obj);

    public V getAndSet(T obj, V newValue) {
        V prev;
        do {
            prev = get(obj);
        } while (!compareAndSet(obj, prev, newValue));
        return prev;
    }

    private static final class Impl<T, V> extends AtomicReferenceFieldUpdater<T, V> {
        private final Class<T> tclass;
        private final Class<V> vclass;
        private final long offset;

        Impl(Class<T> tclass, Class<V> vclass, String name) {
            this.tclass = tclass;
            this.vclass = vclass;
            this.offset = Fields.offset(tclass, name, vclass);
        }

        private void check(T obj, V value) {
            Fields.check(tclass, obj);
            if (value != null && !vclass.isInstance(value)) {
                throw new ClassCastException("not a " + vclass.getName() + ": " + value);
            }
        }

        public boolean compareAndSet(T obj, V expect, V update) {
            check(obj, update);
            return Fields.U.compareAndSwapObject(obj, offset, expect, update);
        }

        public boolean weakCompareAndSet(T obj, V expect, V update) {
            return compareAndSet(obj, expect, update);
        }

        public void set(T obj, V newValue) {
            check(obj, newValue);
            Fields.U.putObjectVolatile(obj, offset, newValue);
        }

        public void lazySet(T obj, V newValue) {
            check(obj, newValue);
            Fields.U.putOrderedObject(obj, offset, newValue);
        }

        @SuppressWarnings("unchecked")
        public V get(T obj) {
            Fields.check(tclass, obj);
            return (V) Fields.U.getObjectVolatile(obj, offset);
        }
    }
}
