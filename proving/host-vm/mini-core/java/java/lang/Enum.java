/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * The base class of every enum (javac's enums call Enum(String, int) and Enum.valueOf). The
 * constants of an enum class come from its values() method, called through reflection.
 */
public abstract class Enum<E extends Enum<E>> implements Comparable<E>, java.io.Serializable {
    private final String name;
    private final int ordinal;

    protected Enum(String name, int ordinal) {
        this.name = name;
        this.ordinal = ordinal;
    }

    public final String name() {
        return name;
    }

    public final int ordinal() {
        return ordinal;
    }

    public String toString() {
        return name;
    }

    public final boolean equals(Object other) {
        return this == other;
    }

    public final int hashCode() {
        return super.hashCode();
    }

    protected final Object clone() throws CloneNotSupportedException {
        throw new CloneNotSupportedException();
    }

    public final int compareTo(E other) {
        Enum<?> o = other;
        if (getDeclaringClass() != o.getDeclaringClass()) {
            throw new ClassCastException();
        }
        return ordinal - o.ordinal;
    }

    /** The enum's own class (a constant with a body is an instance of a subclass of it). */
    @SuppressWarnings("unchecked")
    public final Class<E> getDeclaringClass() {
        Class<?> c = getClass();
        Class<?> s = c.getSuperclass();
        return (Class<E>) (s == Enum.class ? c : s);
    }

    public static <T extends Enum<T>> T valueOf(Class<T> enumType, String name) {
        if (name == null) {
            throw new NullPointerException("Name is null");
        }
        T[] values = enumType.getEnumConstants();
        if (values == null) {
            throw new IllegalArgumentException(enumType.toString() + " is not an enum type.");
        }
        for (T v : values) {
            if (v.name().equals(name)) {
                return v;
            }
        }
        throw new IllegalArgumentException(
                "No enum constant " + enumType.getName().replace('$', '.') + "." + name);
    }
}
