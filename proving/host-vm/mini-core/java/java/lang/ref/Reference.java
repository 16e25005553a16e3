/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.ref;

import dalvik.annotation.optimization.FastNative;

/**
 * A reference the garbage collector treats specially. ART allocates the class pre-sized
 * (mirror::Reference::ClassSize: abstract, two 8-bit static fields) and hard-codes its instance
 * fields' order (ClassLinker::FinishInit): pendingNext, queue, queueNext, referent. The GC reads
 * `referent` itself; Java reads it only through the getReferent intrinsic (a direct native).
 */
public abstract class Reference<T> {
    private static boolean disableIntrinsic = false;
    private static boolean slowPathEnabled = false;

    volatile T referent;
    final ReferenceQueue<? super T> queue;
    Reference queueNext;
    Reference<?> pendingNext;

    Reference(T referent) {
        this(referent, null);
    }

    Reference(T referent, ReferenceQueue<? super T> queue) {
        this.referent = referent;
        this.queue = queue;
    }

    public T get() {
        return getReferent();
    }

    @FastNative
    private final native T getReferent();

    public void clear() {
        clearReferent();
    }

    @FastNative
    native void clearReferent();

    public boolean isEnqueued() {
        return queueNext != null && queueNext != ReferenceQueue.sQueueNextUnenqueued;
    }

    public boolean enqueue() {
        return queue != null && queue.enqueue(this);
    }

    public final boolean refersTo(T obj) {
        return refersTo0(obj);
    }

    @FastNative
    private native boolean refersTo0(Object o);

    public static void reachabilityFence(Object ref) {
    }

    // @generated-members
}
