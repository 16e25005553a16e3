/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/** A list backed by a growable array. */
public class ArrayList<E> extends AbstractList<E> implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    private Object[] elements;
    private int size;

    public ArrayList() {
        elements = new Object[10];
    }

    public ArrayList(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("Illegal Capacity: " + capacity);
        }
        elements = new Object[capacity];
    }

    public int size() {
        return size;
    }

    @SuppressWarnings("unchecked")
    public E get(int index) {
        check(index, size);
        return (E) elements[index];
    }

    public E set(int index, E e) {
        E old = get(index);
        elements[index] = e;
        return old;
    }

    public void add(int index, E e) {
        check(index, size + 1);
        if (size == elements.length) {
            Object[] bigger = new Object[size * 2 + 4];
            System.arraycopy(elements, 0, bigger, 0, size);
            elements = bigger;
        }
        System.arraycopy(elements, index, elements, index + 1, size - index);
        elements[index] = e;
        size++;
    }

    public E remove(int index) {
        E old = get(index);
        System.arraycopy(elements, index + 1, elements, index, size - index - 1);
        elements[--size] = null;
        return old;
    }

    public void clear() {
        for (int i = 0; i < size; i++) {
            elements[i] = null;
        }
        size = 0;
    }

    private static void check(int index, int limit) {
        if (index < 0 || index >= limit) {
            throw new IndexOutOfBoundsException("Index: " + index + ", Size: " + (limit));
        }
    }
}
