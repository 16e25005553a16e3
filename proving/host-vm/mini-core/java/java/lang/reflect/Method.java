/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.reflect;

import dalvik.annotation.optimization.FastNative;

/** A method, as ART's reflection natives (runtime/native/java_lang_reflect_Method.cc) see it. */
public final class Method extends Executable {
    private Method() {
    }

    /** dalvikvm checks main() is public through this (dalvikvm.cc IsMethodPublic). */
    public int getModifiers() {
        return super.getModifiers();
    }

    public String getName() {
        return getMethodNameInternal();
    }

    public String toString() {
        return getDeclaringClass().getName() + "." + getName();
    }

    @FastNative
    public native Object invoke(Object receiver, Object... args)
            throws IllegalAccessException, IllegalArgumentException, InvocationTargetException;

    public Class<?> getReturnType() {
        return getMethodReturnTypeInternal();
    }

    // @generated-members
}
