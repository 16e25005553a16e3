/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.reflect;

import dalvik.annotation.optimization.FastNative;

/**
 * Array creation by reflection. dx turns `new T[a][b]...` (multianewarray) into a call to
 * newInstance(Class, int...), so multi-dimensional arrays need it; the natives are ART's
 * (runtime/native/java_lang_reflect_Array.cc).
 */
public final class Array {
    private Array() {
    }

    public static Object newInstance(Class<?> componentType, int... dimensions) {
        if (dimensions.length == 0) {
            throw new IllegalArgumentException("Empty dimensions array");
        }
        if (componentType == void.class) {
            throw new IllegalArgumentException("Can't allocate an array of void");
        }
        for (int d : dimensions) {
            if (d < 0) {
                throw new NegativeArraySizeException(String.valueOf(d));
            }
        }
        if (dimensions.length == 1) {
            return newInstance(componentType, dimensions[0]);
        }
        return createMultiArray(componentType, dimensions);
    }

    public static Object newInstance(Class<?> componentType, int length) {
        if (!componentType.isPrimitive()) {
            return createObjectArray(componentType, length);
        }
        if (length < 0) {
            throw new NegativeArraySizeException(String.valueOf(length));
        }
        String n = componentType.getName();
        if (n.equals("int")) {
            return new int[length];
        } else if (n.equals("long")) {
            return new long[length];
        } else if (n.equals("char")) {
            return new char[length];
        } else if (n.equals("byte")) {
            return new byte[length];
        } else if (n.equals("boolean")) {
            return new boolean[length];
        } else if (n.equals("short")) {
            return new short[length];
        } else if (n.equals("float")) {
            return new float[length];
        } else if (n.equals("double")) {
            return new double[length];
        }
        throw new IllegalArgumentException("Can't allocate an array of " + n);
    }

    public static int getLength(Object array) {
        if (array instanceof Object[]) {
            return ((Object[]) array).length;
        } else if (array instanceof int[]) {
            return ((int[]) array).length;
        } else if (array instanceof long[]) {
            return ((long[]) array).length;
        } else if (array instanceof char[]) {
            return ((char[]) array).length;
        } else if (array instanceof byte[]) {
            return ((byte[]) array).length;
        } else if (array instanceof boolean[]) {
            return ((boolean[]) array).length;
        } else if (array instanceof short[]) {
            return ((short[]) array).length;
        } else if (array instanceof float[]) {
            return ((float[]) array).length;
        } else if (array instanceof double[]) {
            return ((double[]) array).length;
        }
        throw new IllegalArgumentException("Not an array: " + array);
    }

    @FastNative
    private static native Object createMultiArray(Class<?> componentType, int[] dimensions);

    @FastNative
    private static native Object createObjectArray(Class<?> componentType, int length);

    // @generated-members
}
