/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** A boxed long; home of the integer formatting and parsing the other types use. */
public final class Long extends Number implements Comparable<Long> {
    private static final long serialVersionUID = 1L;

    public static final long MIN_VALUE = 0x8000000000000000L;
    public static final long MAX_VALUE = 0x7fffffffffffffffL;
    public static final int SIZE = 64;
    public static final int BYTES = 8;
    @SuppressWarnings("unchecked")
    public static final Class<Long> TYPE = (Class<Long>) Class.getPrimitiveClass("long");

    private static final char[] DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz".toCharArray();

    private final long value;

    public Long(long value) {
        this.value = value;
    }

    public static Long valueOf(long l) {
        return new Long(l);
    }

    public static Long valueOf(String s) {
        return new Long(parseLong(s, 10));
    }

    public static long parseLong(String s) {
        return parseLong(s, 10);
    }

    public static long parseLong(String s, int radix) {
        if (s == null) {
            throw new NumberFormatException("null");
        }
        int n = s.length();
        int i = 0;
        boolean negative = false;
        if (n > 0 && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
            negative = s.charAt(0) == '-';
            i = 1;
        }
        if (i == n || radix < 2 || radix > 36) {
            throw new NumberFormatException("For input string: \"" + s + "\"");
        }
        // Accumulate negatively: the range of negative longs is the larger one.
        long result = 0;
        long limit = negative ? MIN_VALUE : -MAX_VALUE;
        long multmin = limit / radix;
        for (; i < n; i++) {
            int d = Character.digit(s.charAt(i), radix);
            if (d < 0 || result < multmin) {
                throw new NumberFormatException("For input string: \"" + s + "\"");
            }
            result *= radix;
            if (result < limit + d) {
                throw new NumberFormatException("For input string: \"" + s + "\"");
            }
            result -= d;
        }
        return negative ? result : -result;
    }

    public int intValue() {
        return (int) value;
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
        return (int) (value ^ (value >>> 32));
    }

    public static int hashCode(long v) {
        return (int) (v ^ (v >>> 32));
    }

    public boolean equals(Object o) {
        return o instanceof Long && ((Long) o).value == value;
    }

    public int compareTo(Long other) {
        return compare(value, other.value);
    }

    public String toString() {
        return toString(value, 10);
    }

    public static String toString(long l) {
        return toString(l, 10);
    }

    public static String toString(long l, int radix) {
        if (radix < 2 || radix > 36) {
            radix = 10;
        }
        char[] buf = new char[65];
        int pos = buf.length;
        boolean negative = l < 0;
        if (!negative) {
            l = -l;
        }
        // Work with the negative value: -MIN_VALUE does not exist.
        do {
            buf[--pos] = DIGITS[(int) -(l % radix)];
            l /= radix;
        } while (l != 0);
        if (negative) {
            buf[--pos] = '-';
        }
        return new String(buf, pos, buf.length - pos);
    }

    public static String toUnsignedString(long l, int radix) {
        if (l >= 0) {
            return toString(l, radix);
        }
        char[] buf = new char[64];
        int pos = buf.length;
        // Unsigned division by radix, one digit at a time.
        long quotient = (l >>> 1) / radix << 1;
        long rem = l - quotient * radix;
        if (compareUnsigned(rem, radix) >= 0) {
            quotient++;
            rem -= radix;
        }
        buf[--pos] = DIGITS[(int) rem];
        for (l = quotient; l != 0; l /= radix) {
            buf[--pos] = DIGITS[(int) (l % radix)];
        }
        return new String(buf, pos, buf.length - pos);
    }

    public static String toUnsignedString(long l) {
        return toUnsignedString(l, 10);
    }

    public static String toHexString(long l) {
        return toUnsignedString(l, 16);
    }

    public static String toBinaryString(long l) {
        return toUnsignedString(l, 2);
    }

    public static String toOctalString(long l) {
        return toUnsignedString(l, 8);
    }

    public static int compare(long a, long b) {
        return a < b ? -1 : (a == b ? 0 : 1);
    }

    public static int compareUnsigned(long a, long b) {
        return compare(a + MIN_VALUE, b + MIN_VALUE);
    }

    public static long divideUnsigned(long dividend, long divisor) {
        if (divisor < 0) {
            return compareUnsigned(dividend, divisor) < 0 ? 0 : 1;
        }
        if (dividend >= 0) {
            return dividend / divisor;
        }
        long quotient = ((dividend >>> 1) / divisor) << 1;
        long rem = dividend - quotient * divisor;
        return quotient + (compareUnsigned(rem, divisor) >= 0 ? 1 : 0);
    }

    public static long remainderUnsigned(long dividend, long divisor) {
        return dividend - divideUnsigned(dividend, divisor) * divisor;
    }

    public static int bitCount(long l) {
        int n = 0;
        while (l != 0) {
            l &= l - 1;
            n++;
        }
        return n;
    }

    public static long highestOneBit(long l) {
        return l == 0 ? 0 : MIN_VALUE >>> numberOfLeadingZeros(l);
    }

    public static long lowestOneBit(long l) {
        return l & -l;
    }

    public static int numberOfLeadingZeros(long l) {
        int hi = (int) (l >>> 32);
        return hi != 0 ? Integer.numberOfLeadingZeros(hi) : 32 + Integer.numberOfLeadingZeros((int) l);
    }

    public static int numberOfTrailingZeros(long l) {
        int lo = (int) l;
        return lo != 0 ? Integer.numberOfTrailingZeros(lo)
                : 32 + Integer.numberOfTrailingZeros((int) (l >>> 32));
    }

    public static long reverse(long l) {
        return ((long) Integer.reverse((int) l) << 32) | (Integer.reverse((int) (l >>> 32)) & 0xffffffffL);
    }

    public static long reverseBytes(long l) {
        return ((long) Integer.reverseBytes((int) l) << 32)
                | (Integer.reverseBytes((int) (l >>> 32)) & 0xffffffffL);
    }

    public static long rotateLeft(long l, int distance) {
        return (l << distance) | (l >>> -distance);
    }

    public static long rotateRight(long l, int distance) {
        return (l >>> distance) | (l << -distance);
    }

    public static int signum(long l) {
        return (int) ((l >> 63) | (-l >>> 63));
    }

    public static long sum(long a, long b) {
        return a + b;
    }

    public static long max(long a, long b) {
        return Math.max(a, b);
    }

    public static long min(long a, long b) {
        return Math.min(a, b);
    }

    // @generated-members
}
