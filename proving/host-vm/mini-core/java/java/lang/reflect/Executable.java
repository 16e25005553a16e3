/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.reflect;

/**
 * A method or constructor; its instance fields are mirror::Executable's, which ART fills in when
 * it creates one (Method/Constructor::CreateFromArtMethod).
 */
public abstract class Executable extends AccessibleObject implements Member {
    private boolean hasRealParameterData;
    private Class<?> declaringClass;
    private Class<?> declaringClassOfOverriddenMethod;
    private Object[] parameters;
    private long artMethod;
    private int accessFlags;
    private int dexMethodIndex;

    Executable() {
    }

    public Class<?> getDeclaringClass() {
        return declaringClass;
    }

    public int getModifiers() {
        return accessFlags & 0xd3f;
    }

    public boolean isVarArgs() {
        return (accessFlags & 0x80) != 0;
    }

    public boolean isSynthetic() {
        return (accessFlags & 0x1000) != 0;
    }

    public abstract String getName();

    @dalvik.annotation.optimization.FastNative
    native String getMethodNameInternal();

    /** The parameter types, in order (a new array each time). */
    public Class<?>[] getParameterTypes() {
        Class<?>[] p = getParameterTypesInternal();
        return p == null ? new Class<?>[0] : p;
    }

    public int getParameterCount() {
        return getParameterCountInternal();
    }

    @dalvik.annotation.optimization.FastNative
    native Class<?>[] getParameterTypesInternal();

    @dalvik.annotation.optimization.FastNative
    native int getParameterCountInternal();

    @dalvik.annotation.optimization.FastNative
    native Class<?> getMethodReturnTypeInternal();

    // @generated-members
}
