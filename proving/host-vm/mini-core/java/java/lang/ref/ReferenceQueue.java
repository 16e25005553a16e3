/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.ref;

/**
 * Where cleared references go. ART hands the references a collection cleared to add(Reference),
 * as a circular list through pendingNext (gc/reference_processor.cc); each is moved to its own
 * queue here, on the calling thread.
 */
public class ReferenceQueue<T> {
    private final Object lock = new Object();
    private Reference<? extends T> head;
    private Reference<? extends T> tail;

    public ReferenceQueue() {
    }

    /** Called by ART with a circular list linked by pendingNext. */
    static void add(Reference<?> list) {
        Reference<?> start = list;
        Reference<?> r = list;
        do {
            Reference<?> next = r.pendingNext;
            r.pendingNext = r;
            if (r.queue != null) {
                r.queue.enqueueCleared(r);
            }
            r = next;
        } while (r != start);
    }

    @SuppressWarnings("unchecked")
    private void enqueueCleared(Reference<?> r) {
        synchronized (lock) {
            enqueueLocked((Reference<? extends T>) r);
            lock.notifyAll();
        }
    }

    boolean enqueue(Reference<? extends T> r) {
        synchronized (lock) {
            if (r.queueNext != null) {
                return false;
            }
            enqueueLocked(r);
            lock.notifyAll();
            return true;
        }
    }

    private void enqueueLocked(Reference<? extends T> r) {
        if (r.queueNext != null) {
            return;
        }
        r.queueNext = r;  // the last element points at itself
        if (tail == null) {
            head = r;
        } else {
            tail.queueNext = r;
        }
        tail = r;
    }

    @SuppressWarnings("unchecked")
    private Reference<? extends T> pollLocked() {
        Reference<? extends T> r = head;
        if (r == null) {
            return null;
        }
        if (r.queueNext == r) {
            head = null;
            tail = null;
        } else {
            head = (Reference<? extends T>) r.queueNext;
        }
        r.queueNext = sQueueNextUnenqueued;
        return r;
    }

    /** Marks references that have left their queue (so they do not enqueue again). */
    static final Reference<Object> sQueueNextUnenqueued = new PhantomReference<Object>(null, null);

    public Reference<? extends T> poll() {
        synchronized (lock) {
            return pollLocked();
        }
    }

    public Reference<? extends T> remove() throws InterruptedException {
        return remove(0);
    }

    public Reference<? extends T> remove(long timeout) throws InterruptedException {
        synchronized (lock) {
            long deadline = timeout == 0 ? 0 : System.currentTimeMillis() + timeout;
            while (true) {
                Reference<? extends T> r = pollLocked();
                if (r != null) {
                    return r;
                }
                if (timeout == 0) {
                    lock.wait(0);
                } else {
                    long left = deadline - System.currentTimeMillis();
                    if (left <= 0) {
                        return null;
                    }
                    lock.wait(left);
                }
            }
        }
    }
}
