/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/** An ordered collection (Throwable.suppressedExceptions is one; ART reads Collections.EMPTY_LIST). */
public interface List<E> extends Collection<E> {
    E get(int index);

    E set(int index, E e);

    void add(int index, E e);

    E remove(int index);

    int indexOf(Object o);
}
