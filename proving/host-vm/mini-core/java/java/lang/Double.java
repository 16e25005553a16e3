/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * A boxed double. The bit conversions, formatting and parsing are natives of mini-core's own
 * (proving/host-vm/native/core_natives.cc, found by their JNI names in libjavacore.so).
 */
public final class Double extends Number implements Comparable<Double> {
    private static final long serialVersionUID = 1L;
    public static final double POSITIVE_INFINITY = 1.0 / 0.0;
    public static final double NEGATIVE_INFINITY = -1.0 / 0.0;
    public static final double NaN = 0.0d / 0.0;
    public static final double MAX_VALUE = 0x1.fffffffffffffP+1023;
    public static final double MIN_VALUE = 0x0.0000000000001P-1022;
    public static final double MIN_NORMAL = 0x1.0p-1022;
    public static final int SIZE = 64;
    public static final int BYTES = 8;
    @SuppressWarnings("unchecked")
    public static final Class<Double> TYPE = (Class<Double>) Class.getPrimitiveClass("double");

    private final double value;

    public Double(double value) {
        this.value = value;
    }

    public static Double valueOf(double d) {
        return new Double(d);
    }

    public static Double valueOf(String s) {
        return new Double(parseDouble(s));
    }

    public static double parseDouble(String s) {
        if (s == null) {
            throw new NullPointerException("s == null");
        }
        String t = s.trim();
        if (t.isEmpty()) {
            throw new NumberFormatException("empty String");
        }
        double[] out = new double[1];
        if (!parse(t, out)) {
            throw new NumberFormatException("For input string: \"" + s + "\"");
        }
        return out[0];
    }

    public static boolean isNaN(double d) {
        return d != d;
    }

    public static boolean isInfinite(double d) {
        return d == POSITIVE_INFINITY || d == NEGATIVE_INFINITY;
    }

    public static boolean isFinite(double d) {
        return !isNaN(d) && !isInfinite(d);
    }

    public boolean isNaN() {
        return value != value;
    }

    public static long doubleToLongBits(double d) {
        return d != d ? 0x7ff8000000000000L : doubleToRawLongBits(d);
    }

    public static native long doubleToRawLongBits(double d);

    public static native double longBitsToDouble(long bits);

    private static native String toStringImpl(double d);

    private static native boolean parse(String s, double[] out);

    public static String toString(double d) {
        return toStringImpl(d);
    }

    public static int compare(double a, double b) {
        if (a < b) {
            return -1;
        }
        if (a > b) {
            return 1;
        }
        long x = doubleToLongBits(a);
        long y = doubleToLongBits(b);
        return x == y ? 0 : (x < y ? -1 : 1);
    }

    public int intValue() {
        return (int) value;
    }

    public long longValue() {
        return (long) value;
    }

    public float floatValue() {
        return (float) value;
    }

    public double doubleValue() {
        return value;
    }

    public int hashCode() {
        long bits = doubleToLongBits(value);
        return (int) (bits ^ (bits >>> 32));
    }

    public boolean equals(Object o) {
        return o instanceof Double
                && doubleToLongBits(((Double) o).value) == doubleToLongBits(value);
    }

    public int compareTo(Double other) {
        return compare(value, other.value);
    }

    public String toString() {
        return toStringImpl(value);
    }

    public static double sum(double a, double b) {
        return a + b;
    }

    public static double max(double a, double b) {
        return Math.max(a, b);
    }

    public static double min(double a, double b) {
        return Math.min(a, b);
    }

    // @generated-members
}
