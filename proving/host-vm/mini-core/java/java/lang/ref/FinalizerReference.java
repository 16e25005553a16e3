/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.ref;

import dalvik.annotation.optimization.FastNative;

/**
 * Keeps an object with a finalize() method reachable until it has been finalized. ART calls add()
 * for each such object it allocates (Heap::AddFinalizerReference) and reads `zombie` by index
 * (ClassLinker::FinishInit). mini-core collects them on `queue`; running finalizers is
 * Daemons' job (not started yet).
 */
public final class FinalizerReference<T> extends Reference<T> {
    public static final ReferenceQueue<Object> queue = new ReferenceQueue<Object>();

    private static final Object LIST_LOCK = new Object();
    private static FinalizerReference<?> head;

    private T zombie;
    private FinalizerReference<?> prev;
    private FinalizerReference<?> next;

    private FinalizerReference(T r, ReferenceQueue<? super T> q) {
        super(r, q);
    }

    public T get() {
        return zombie;
    }

    public void clear() {
        zombie = null;
    }

    public static void add(Object referent) {
        FinalizerReference<?> r = new FinalizerReference<Object>(referent, queue);
        synchronized (LIST_LOCK) {
            r.prev = null;
            r.next = head;
            if (head != null) {
                head.prev = r;
            }
            head = r;
        }
    }

    public static void remove(FinalizerReference<?> r) {
        synchronized (LIST_LOCK) {
            FinalizerReference<?> n = r.next;
            FinalizerReference<?> p = r.prev;
            r.next = null;
            r.prev = null;
            if (p != null) {
                p.next = n;
            } else {
                head = n;
            }
            if (n != null) {
                n.prev = p;
            }
        }
    }

    // @generated-members
}
