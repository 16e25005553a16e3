/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.annotation.optimization.FastNative;

/**
 * The root of the hierarchy. ART allocates java.lang.Object pre-sized (mirror::Object::ClassSize):
 * exactly the 11 virtual methods below and no static fields; its two instance fields mirror
 * mirror::Object's klass_ and monitor_ (class_linker_test.cc ObjectOffsets).
 */
public class Object {
    private transient Class<?> shadow$_klass_;
    private transient int shadow$_monitor_;

    public Object() {
    }

    public final Class<?> getClass() {
        return shadow$_klass_;
    }

    public int hashCode() {
        return identityHashCodeNative(this);
    }

    public boolean equals(Object other) {
        return this == other;
    }

    protected Object clone() throws CloneNotSupportedException {
        if (!(this instanceof Cloneable)) {
            throw new CloneNotSupportedException("Class " + getClass().getName()
                    + " doesn't implement Cloneable");
        }
        return internalClone();
    }

    public String toString() {
        return getClass().getName() + "@" + Integer.toHexString(hashCode());
    }

    @FastNative
    public final native void notify();

    @FastNative
    public final native void notifyAll();

    public final void wait() throws InterruptedException {
        wait(0L, 0);
    }

    public final void wait(long millis) throws InterruptedException {
        wait(millis, 0);
    }

    @FastNative
    public final native void wait(long millis, int nanos) throws InterruptedException;

    protected void finalize() throws Throwable {
    }

    @FastNative
    static native int identityHashCodeNative(Object object);

    @FastNative
    private native Object internalClone();

    // @generated-members
}
