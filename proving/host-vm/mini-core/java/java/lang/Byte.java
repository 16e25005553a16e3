/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** A boxed byte. */
public final class Byte extends Number implements Comparable<Byte> {
    private static final long serialVersionUID = 1L;
    public static final byte MIN_VALUE = -128;
    public static final byte MAX_VALUE = 127;
    @SuppressWarnings("unchecked")
    public static final Class<Byte> TYPE = (Class<Byte>) Class.getPrimitiveClass("byte");

    private static final Byte[] ALL = new Byte[256];

    private final byte value;

    public Byte(byte value) {
        this.value = value;
    }

    public static Byte valueOf(byte b) {
        Byte v = ALL[b + 128];
        if (v == null) {
            v = new Byte(b);
            ALL[b + 128] = v;
        }
        return v;
    }

    public static byte parseByte(String s) {
        int i = Integer.parseInt(s);
        if (i < MIN_VALUE || i > MAX_VALUE) {
            throw new NumberFormatException("Value out of range. Value:\"" + s + "\"");
        }
        return (byte) i;
    }

    public static int compare(byte a, byte b) {
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

    public byte byteValue() {
        return value;
    }

    public int hashCode() {
        return value;
    }

    public boolean equals(Object o) {
        return o instanceof Byte && ((Byte) o).value == value;
    }

    public int compareTo(Byte other) {
        return value - other.value;
    }

    public String toString() {
        return Integer.toString(value);
    }

    public static String toString(byte b) {
        return Integer.toString(b);
    }

    // @generated-members
}
