/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent;

import java.util.ArrayList;

/** A first-in first-out queue whose operations hold this object's monitor. */
public class ConcurrentLinkedQueue<E> implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final ArrayList<E> items = new ArrayList<E>();

    public ConcurrentLinkedQueue() {
    }

    public boolean add(E e) {
        return offer(e);
    }

    public synchronized boolean offer(E e) {
        if (e == null) {
            throw new NullPointerException();
        }
        return items.add(e);
    }

    public synchronized E poll() {
        return items.isEmpty() ? null : items.remove(0);
    }

    public synchronized E peek() {
        return items.isEmpty() ? null : items.get(0);
    }

    public synchronized boolean isEmpty() {
        return items.isEmpty();
    }

    public synchronized int size() {
        return items.size();
    }
}
