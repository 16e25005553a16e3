/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.reflect;

/** A constructor (natives: runtime/native/java_lang_reflect_Constructor.cc). */
public final class Constructor<T> extends Executable {
    private Constructor() {
    }

    public String getName() {
        return getDeclaringClass().getName();
    }

    public T newInstance(Object... args) throws InstantiationException, IllegalAccessException,
            InvocationTargetException {
        @SuppressWarnings("unchecked")
        T t = (T) newInstance0(args);
        return t;
    }

    public String toString() {
        return getDeclaringClass().getName() + ".<init>";
    }

    @dalvik.annotation.optimization.FastNative
    private native Object newInstance0(Object... args)
            throws InstantiationException, IllegalAccessException, InvocationTargetException;

    // @generated-members
}
