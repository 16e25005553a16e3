/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * A boxed int. The static bit-twiddling methods are ART intrinsics (intrinsics_list.h); their
 * bodies here are the plain-Java meaning the interpreter runs.
 */
public final class Integer extends Number implements Comparable<Integer> {
    private static final long serialVersionUID = 1L;

    public static final int MIN_VALUE = 0x80000000;
    public static final int MAX_VALUE = 0x7fffffff;
    public static final int SIZE = 32;
    public static final int BYTES = 4;
    @SuppressWarnings("unchecked")
    public static final Class<Integer> TYPE = (Class<Integer>) Class.getPrimitiveClass("int");

    private static final Integer[] SMALL = new Integer[256];

    private final int value;

    public Integer(int value) {
        this.value = value;
    }

    public static Integer valueOf(int i) {
        if (i >= -128 && i < 128) {
            Integer v = SMALL[i + 128];
            if (v == null) {
                v = new Integer(i);
                SMALL[i + 128] = v;
            }
            return v;
        }
        return new Integer(i);
    }

    public static Integer valueOf(String s) {
        return valueOf(parseInt(s, 10));
    }

    public static int parseInt(String s) {
        return parseInt(s, 10);
    }

    public static int parseInt(String s, int radix) {
        long v = Long.parseLong(s, radix);
        if (v < MIN_VALUE || v > MAX_VALUE) {
            throw new NumberFormatException("For input string: \"" + s + "\"");
        }
        return (int) v;
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

    public int hashCode() {
        return value;
    }

    public static int hashCode(int v) {
        return v;
    }

    public boolean equals(Object o) {
        return o instanceof Integer && ((Integer) o).value == value;
    }

    public int compareTo(Integer other) {
        return compare(value, other.value);
    }

    public String toString() {
        return toString(value);
    }

    public static String toString(int i) {
        return Long.toString(i, 10);
    }

    public static String toString(int i, int radix) {
        return Long.toString(i, radix);
    }

    public static String toHexString(int i) {
        return Long.toUnsignedString(i & 0xffffffffL, 16);
    }

    public static String toOctalString(int i) {
        return Long.toUnsignedString(i & 0xffffffffL, 8);
    }

    public static String toBinaryString(int i) {
        return Long.toUnsignedString(i & 0xffffffffL, 2);
    }

    public static String toUnsignedString(int i) {
        return Long.toString(i & 0xffffffffL);
    }

    public static int compare(int a, int b) {
        return a < b ? -1 : (a == b ? 0 : 1);
    }

    public static int compareUnsigned(int a, int b) {
        return compare(a + MIN_VALUE, b + MIN_VALUE);
    }

    public static int divideUnsigned(int dividend, int divisor) {
        return (int) ((dividend & 0xffffffffL) / (divisor & 0xffffffffL));
    }

    public static int remainderUnsigned(int dividend, int divisor) {
        return (int) ((dividend & 0xffffffffL) % (divisor & 0xffffffffL));
    }

    public static int bitCount(int i) {
        int n = 0;
        while (i != 0) {
            i &= i - 1;
            n++;
        }
        return n;
    }

    public static int highestOneBit(int i) {
        return i == 0 ? 0 : MIN_VALUE >>> numberOfLeadingZeros(i);
    }

    public static int lowestOneBit(int i) {
        return i & -i;
    }

    public static int numberOfLeadingZeros(int i) {
        if (i == 0) {
            return 32;
        }
        int n = 0;
        while ((i & MIN_VALUE) == 0) {
            i <<= 1;
            n++;
        }
        return n;
    }

    public static int numberOfTrailingZeros(int i) {
        if (i == 0) {
            return 32;
        }
        int n = 0;
        while ((i & 1) == 0) {
            i >>>= 1;
            n++;
        }
        return n;
    }

    public static int reverse(int i) {
        int r = 0;
        for (int k = 0; k < 32; k++) {
            r = (r << 1) | (i & 1);
            i >>>= 1;
        }
        return r;
    }

    public static int reverseBytes(int i) {
        return (i << 24) | ((i & 0xff00) << 8) | ((i >>> 8) & 0xff00) | (i >>> 24);
    }

    public static int rotateLeft(int i, int distance) {
        return (i << distance) | (i >>> -distance);
    }

    public static int rotateRight(int i, int distance) {
        return (i >>> distance) | (i << -distance);
    }

    public static int signum(int i) {
        return (i >> 31) | (-i >>> 31);
    }

    public static int sum(int a, int b) {
        return a + b;
    }

    public static int max(int a, int b) {
        return Math.max(a, b);
    }

    public static int min(int a, int b) {
        return Math.min(a, b);
    }

    // @generated-members
}
