/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.ref;

/** A phantom reference (ART flags this class for its GC: ClassLinker::InitWithoutImage). */
public class PhantomReference<T> extends Reference<T> {

    public PhantomReference(T referent, ReferenceQueue<? super T> q) {
        super(referent, q);
    }

    public T get() {
        return null;
    }

    // @generated-members
}
