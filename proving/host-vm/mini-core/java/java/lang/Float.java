/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** A boxed float (natives in proving/host-vm/native/core_natives.cc). */
public final class Float extends Number implements Comparable<Float> {
    private static final long serialVersionUID = 1L;
    public static final float POSITIVE_INFINITY = 1.0f / 0.0f;
    public static final float NEGATIVE_INFINITY = -1.0f / 0.0f;
    public static final float NaN = 0.0f / 0.0f;
    public static final float MAX_VALUE = 0x1.fffffeP+127f;
    public static final float MIN_VALUE = 0x0.000002P-126f;
    public static final float MIN_NORMAL = 0x1.0p-126f;
    public static final int SIZE = 32;
    public static final int BYTES = 4;
    @SuppressWarnings("unchecked")
    public static final Class<Float> TYPE = (Class<Float>) Class.getPrimitiveClass("float");

    private final float value;

    public Float(float value) {
        this.value = value;
    }

    public static Float valueOf(float f) {
        return new Float(f);
    }

    public static Float valueOf(String s) {
        return new Float(parseFloat(s));
    }

    public static float parseFloat(String s) {
        return (float) Double.parseDouble(s);
    }

    public static boolean isNaN(float f) {
        return f != f;
    }

    public static boolean isInfinite(float f) {
        return f == POSITIVE_INFINITY || f == NEGATIVE_INFINITY;
    }

    public static boolean isFinite(float f) {
        return !isNaN(f) && !isInfinite(f);
    }

    public boolean isNaN() {
        return value != value;
    }

    public static int floatToIntBits(float f) {
        return f != f ? 0x7fc00000 : floatToRawIntBits(f);
    }

    public static native int floatToRawIntBits(float f);

    public static native float intBitsToFloat(int bits);

    private static native String toStringImpl(float f);

    public static String toString(float f) {
        return toStringImpl(f);
    }

    public static int compare(float a, float b) {
        if (a < b) {
            return -1;
        }
        if (a > b) {
            return 1;
        }
        int x = floatToIntBits(a);
        int y = floatToIntBits(b);
        return x == y ? 0 : (x < y ? -1 : 1);
    }

    public int intValue() {
        return (int) value;
    }

    public long longValue() {
        return (long) value;
    }

    public float floatValue() {
        return value;
    }

    public double doubleValue() {
        return value;
    }

    public int hashCode() {
        return floatToIntBits(value);
    }

    public boolean equals(Object o) {
        return o instanceof Float && floatToIntBits(((Float) o).value) == floatToIntBits(value);
    }

    public int compareTo(Float other) {
        return compare(value, other.value);
    }

    public String toString() {
        return toStringImpl(value);
    }

    public static float sum(float a, float b) {
        return a + b;
    }

    public static float max(float a, float b) {
        return Math.max(a, b);
    }

    public static float min(float a, float b) {
        return Math.min(a, b);
    }

    // @generated-members
}
