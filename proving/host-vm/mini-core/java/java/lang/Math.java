/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * Elementary functions. Every method ART lists as an intrinsic is here with its invoke kind
 * (static); the transcendental ones call the C library through mini-core's natives
 * (proving/host-vm/native/core_natives.cc), the rest are plain Java.
 */
public final class Math {
    public static final double E = 2.718281828459045;
    public static final double PI = 3.141592653589793;

    private Math() {
    }

    public static int abs(int a) {
        return a < 0 ? -a : a;
    }

    public static long abs(long a) {
        return a < 0 ? -a : a;
    }

    public static float abs(float a) {
        return Float.intBitsToFloat(Float.floatToRawIntBits(a) & 0x7fffffff);
    }

    public static double abs(double a) {
        return Double.longBitsToDouble(Double.doubleToRawLongBits(a) & 0x7fffffffffffffffL);
    }

    public static int max(int a, int b) {
        return a >= b ? a : b;
    }

    public static long max(long a, long b) {
        return a >= b ? a : b;
    }

    public static int min(int a, int b) {
        return a <= b ? a : b;
    }

    public static long min(long a, long b) {
        return a <= b ? a : b;
    }

    public static float max(float a, float b) {
        if (a != a) {
            return a;
        }
        if (a == 0.0f && b == 0.0f && Float.floatToRawIntBits(a) == 0x80000000) {
            return b;
        }
        return a >= b ? a : b;
    }

    public static double max(double a, double b) {
        if (a != a) {
            return a;
        }
        if (a == 0.0 && b == 0.0 && Double.doubleToRawLongBits(a) == 0x8000000000000000L) {
            return b;
        }
        return a >= b ? a : b;
    }

    public static float min(float a, float b) {
        if (a != a) {
            return a;
        }
        if (a == 0.0f && b == 0.0f && Float.floatToRawIntBits(b) == 0x80000000) {
            return b;
        }
        return a <= b ? a : b;
    }

    public static double min(double a, double b) {
        if (a != a) {
            return a;
        }
        if (a == 0.0 && b == 0.0 && Double.doubleToRawLongBits(b) == 0x8000000000000000L) {
            return b;
        }
        return a <= b ? a : b;
    }

    public static long round(double a) {
        if (a != a) {
            return 0;
        }
        return (long) floor(a + 0.5d);
    }

    public static int round(float a) {
        if (a != a) {
            return 0;
        }
        return (int) floor(a + 0.5d);
    }

    public static long multiplyHigh(long x, long y) {
        long x1 = x >> 32;
        long x2 = x & 0xffffffffL;
        long y1 = y >> 32;
        long y2 = y & 0xffffffffL;
        long z2 = x2 * y2;
        long t = x1 * y2 + (z2 >>> 32);
        long z1 = t & 0xffffffffL;
        long z0 = t >> 32;
        z1 += x2 * y1;
        return x1 * y1 + z0 + (z1 >> 32);
    }

    public static int addExact(int a, int b) {
        int r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) {
            throw new ArithmeticException("integer overflow");
        }
        return r;
    }

    public static long addExact(long a, long b) {
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) {
            throw new ArithmeticException("long overflow");
        }
        return r;
    }

    public static int multiplyExact(int a, int b) {
        long r = (long) a * b;
        if ((int) r != r) {
            throw new ArithmeticException("integer overflow");
        }
        return (int) r;
    }

    public static int floorDiv(int a, int b) {
        int q = a / b;
        return ((a % b != 0) && ((a ^ b) < 0)) ? q - 1 : q;
    }

    public static int floorMod(int a, int b) {
        return a - floorDiv(a, b) * b;
    }

    public static double signum(double d) {
        return (d == 0.0 || d != d) ? d : (d > 0 ? 1.0 : -1.0);
    }

    public static double toRadians(double deg) {
        return deg / 180.0 * PI;
    }

    public static double toDegrees(double rad) {
        return rad * 180.0 / PI;
    }

    public static double random() {
        return Holder.next();
    }

    private static final class Holder {
        private static long seed = System.nanoTime() ^ 0x5deece66dL;

        static synchronized double next() {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            return (seed >>> 11) * 0x1.0p-53;
        }
    }

    public static native double sin(double a);

    public static native double cos(double a);

    public static native double tan(double a);

    public static native double asin(double a);

    public static native double acos(double a);

    public static native double atan(double a);

    public static native double atan2(double y, double x);

    public static native double sinh(double a);

    public static native double cosh(double a);

    public static native double tanh(double a);

    public static native double exp(double a);

    public static native double expm1(double a);

    public static native double log(double a);

    public static native double log10(double a);

    public static native double log1p(double a);

    public static native double pow(double a, double b);

    public static native double sqrt(double a);

    public static native double cbrt(double a);

    public static native double hypot(double x, double y);

    public static native double ceil(double a);

    public static native double floor(double a);

    public static native double rint(double a);

    public static native double nextAfter(double start, double direction);

    public static native double fma(double a, double b, double c);

    public static native float fma(float a, float b, float c);

    // @generated-members
}
