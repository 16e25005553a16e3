/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import java.lang.ref.WeakReference;
import java.util.ArrayList;

/**
 * A value per thread. Kept in this object (threads weakly, looked up linearly under its
 * monitor), not in the Thread: fine for the few threads and thread-locals of small programs.
 */
public class ThreadLocal<T> {
    private final ArrayList<WeakReference<Thread>> threads = new ArrayList<WeakReference<Thread>>();
    private final ArrayList<Object> values = new ArrayList<Object>();

    public ThreadLocal() {
    }

    protected T initialValue() {
        return null;
    }

    /** The index of the current thread's value, or -1; drops the entries of collected threads. */
    private int find(Thread t) {
        int found = -1;
        for (int i = threads.size() - 1; i >= 0; i--) {
            Thread k = threads.get(i).get();
            if (k == null) {
                threads.remove(i);
                values.remove(i);
                if (found > i) {
                    found--;
                }
            } else if (k == t) {
                found = i;
            }
        }
        return found;
    }

    @SuppressWarnings("unchecked")
    public T get() {
        Thread t = Thread.currentThread();
        synchronized (this) {
            int i = find(t);
            if (i >= 0) {
                return (T) values.get(i);
            }
        }
        T v = initialValue();
        set(v);
        return v;
    }

    public void set(T value) {
        Thread t = Thread.currentThread();
        synchronized (this) {
            int i = find(t);
            if (i >= 0) {
                values.set(i, value);
            } else {
                threads.add(new WeakReference<Thread>(t));
                values.add(value);
            }
        }
    }

    public void remove() {
        Thread t = Thread.currentThread();
        synchronized (this) {
            int i = find(t);
            if (i >= 0) {
                threads.remove(i);
                values.remove(i);
            }
        }
    }
}
