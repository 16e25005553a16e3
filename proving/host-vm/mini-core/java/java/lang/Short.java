/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** A boxed short. */
public final class Short extends Number implements Comparable<Short> {
    private static final long serialVersionUID = 1L;
    public static final short MIN_VALUE = -32768;
    public static final short MAX_VALUE = 32767;
    @SuppressWarnings("unchecked")
    public static final Class<Short> TYPE = (Class<Short>) Class.getPrimitiveClass("short");

    private final short value;

    public Short(short value) {
        this.value = value;
    }

    public static Short valueOf(short s) {
        return new Short(s);
    }

    public static short parseShort(String s) {
        int i = Integer.parseInt(s);
        if (i < MIN_VALUE || i > MAX_VALUE) {
            throw new NumberFormatException("Value out of range. Value:\"" + s + "\"");
        }
        return (short) i;
    }

    public static short reverseBytes(short s) {
        return (short) (((s & 0xff) << 8) | ((s >> 8) & 0xff));
    }

    public static int compare(short a, short b) {
        return a - b;
    }

    public int intValue() {
        return value;
    }

    public long longValue() {
        return value;
    }

    public float floatValue() {
        return value;
    }

    public double doubleValue() {
        return value;
    }

    public short shortValue() {
        return value;
    }

    public int hashCode() {
        return value;
    }

    public boolean equals(Object o) {
        return o instanceof Short && ((Short) o).value == value;
    }

    public int compareTo(Short other) {
        return value - other.value;
    }

    public String toString() {
        return Integer.toString(value);
    }

    public static String toString(short s) {
        return Integer.toString(s);
    }

    // @generated-members
}
