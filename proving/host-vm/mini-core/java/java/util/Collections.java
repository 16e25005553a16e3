/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/** ART reads EMPTY_LIST (and CHECKs it is not null) when it builds a StackOverflowError. */
public class Collections {
    @SuppressWarnings("rawtypes")
    public static final List EMPTY_LIST = new EmptyList<Object>();

    private Collections() {
    }

    @SuppressWarnings("unchecked")
    public static <T> List<T> emptyList() {
        return (List<T>) EMPTY_LIST;
    }

    private static final class EmptyList<E> extends AbstractList<E> implements java.io.Serializable {
        private static final long serialVersionUID = 1L;

        EmptyList() {
        }

        public int size() {
            return 0;
        }

        public E get(int index) {
            throw new IndexOutOfBoundsException("Index: " + index);
        }
    }

    // @generated-members
}
