/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

/** An array of references whose elements are read, written and swapped atomically (Fields). */
public class AtomicReferenceArray<E> implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private static final int BASE = sun.misc.Unsafe.getArrayBaseOffsetForComponentType(Object.class);
    private static final int SCALE = sun.misc.Unsafe.getArrayIndexScaleForComponentType(Object.class);
    private final Object[] array;

    public AtomicReferenceArray(int length) {
        array = new Object[length];
    }

    private long at(int i) {
        if (i < 0 || i >= array.length) {
            throw new IndexOutOfBoundsException("index " + i);
        }
        return BASE + (long) i * SCALE;
    }

    public final int length() {
        return array.length;
    }

    @SuppressWarnings("unchecked")
    public final E get(int i) {
        return (E) Fields.U.getObjectVolatile(array, at(i));
    }

    public final void set(int i, E value) {
        Fields.U.putObjectVolatile(array, at(i), value);
    }

    public final void lazySet(int i, E value) {
        Fields.U.putOrderedObject(array, at(i), value);
    }

    public final boolean compareAndSet(int i, E expect, E update) {
        return Fields.U.compareAndSwapObject(array, at(i), expect, update);
    }

    public final E getAndSet(int i, E value) {
        E prev;
        do {
            prev = get(i);
        } while (!compareAndSet(i, prev, value));
        return prev;
    }

    public String toString() {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < array.length; i++) {
            b.append(i == 0 ? "" : ", ").append(get(i));
        }
        return b.append(']').toString();
    }
}
