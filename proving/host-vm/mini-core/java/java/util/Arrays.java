/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/**
 * Array helpers (written for the run-tests: toString, deepToString, equals, hashCode, fill,
 * copyOf, copyOfRange, asList, sort). Sorting is a plain merge sort (stable, O(n log n)).
 */
public final class Arrays {
    private Arrays() {
    }

    public static String toString(boolean[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(a[i]);
        }
        return sb.append(']').toString();
    }

    public static boolean equals(boolean[] a, boolean[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(boolean[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (boolean v : a) {
            h = 31 * h + (v ? 1231 : 1237);
        }
        return h;
    }

    public static void fill(boolean[] a, boolean v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(boolean[] a, int from, int to, boolean v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    public static boolean[] copyOf(boolean[] a, int n) {
        boolean[] r = new boolean[n];
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    public static boolean[] copyOfRange(boolean[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        boolean[] r = new boolean[to - from];
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static String toString(byte[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(a[i]);
        }
        return sb.append(']').toString();
    }

    public static boolean equals(byte[] a, byte[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(byte[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (byte v : a) {
            h = 31 * h + v;
        }
        return h;
    }

    public static void fill(byte[] a, byte v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(byte[] a, int from, int to, byte v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    public static byte[] copyOf(byte[] a, int n) {
        byte[] r = new byte[n];
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    public static byte[] copyOfRange(byte[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        byte[] r = new byte[to - from];
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static void sort(byte[] a) {
        sort(a, 0, a.length);
    }

    public static void sort(byte[] a, int from, int to) {
        checkRange(a.length, from, to);
        if (to - from < 2) {
            return;
        }
        byte[] tmp = new byte[to - from];
        mergeSort(a, tmp, from, to);
    }

    private static void mergeSort(byte[] a, byte[] tmp, int from, int to) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid);
        mergeSort(a, tmp, mid, to);
        int i = from, j = mid, k = 0;
        while (i < mid && j < to) {
            tmp[k++] = (a[j] < a[i]) ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, 0, a, from, k);
    }

    public static String toString(char[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(a[i]);
        }
        return sb.append(']').toString();
    }

    public static boolean equals(char[] a, char[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(char[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (char v : a) {
            h = 31 * h + v;
        }
        return h;
    }

    public static void fill(char[] a, char v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(char[] a, int from, int to, char v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    public static char[] copyOf(char[] a, int n) {
        char[] r = new char[n];
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    public static char[] copyOfRange(char[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        char[] r = new char[to - from];
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static void sort(char[] a) {
        sort(a, 0, a.length);
    }

    public static void sort(char[] a, int from, int to) {
        checkRange(a.length, from, to);
        if (to - from < 2) {
            return;
        }
        char[] tmp = new char[to - from];
        mergeSort(a, tmp, from, to);
    }

    private static void mergeSort(char[] a, char[] tmp, int from, int to) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid);
        mergeSort(a, tmp, mid, to);
        int i = from, j = mid, k = 0;
        while (i < mid && j < to) {
            tmp[k++] = (a[j] < a[i]) ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, 0, a, from, k);
    }

    public static String toString(short[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(a[i]);
        }
        return sb.append(']').toString();
    }

    public static boolean equals(short[] a, short[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(short[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (short v : a) {
            h = 31 * h + v;
        }
        return h;
    }

    public static void fill(short[] a, short v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(short[] a, int from, int to, short v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    public static short[] copyOf(short[] a, int n) {
        short[] r = new short[n];
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    public static short[] copyOfRange(short[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        short[] r = new short[to - from];
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static void sort(short[] a) {
        sort(a, 0, a.length);
    }

    public static void sort(short[] a, int from, int to) {
        checkRange(a.length, from, to);
        if (to - from < 2) {
            return;
        }
        short[] tmp = new short[to - from];
        mergeSort(a, tmp, from, to);
    }

    private static void mergeSort(short[] a, short[] tmp, int from, int to) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid);
        mergeSort(a, tmp, mid, to);
        int i = from, j = mid, k = 0;
        while (i < mid && j < to) {
            tmp[k++] = (a[j] < a[i]) ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, 0, a, from, k);
    }

    public static String toString(int[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(a[i]);
        }
        return sb.append(']').toString();
    }

    public static boolean equals(int[] a, int[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(int[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (int v : a) {
            h = 31 * h + v;
        }
        return h;
    }

    public static void fill(int[] a, int v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(int[] a, int from, int to, int v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    public static int[] copyOf(int[] a, int n) {
        int[] r = new int[n];
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    public static int[] copyOfRange(int[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        int[] r = new int[to - from];
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static void sort(int[] a) {
        sort(a, 0, a.length);
    }

    public static void sort(int[] a, int from, int to) {
        checkRange(a.length, from, to);
        if (to - from < 2) {
            return;
        }
        int[] tmp = new int[to - from];
        mergeSort(a, tmp, from, to);
    }

    private static void mergeSort(int[] a, int[] tmp, int from, int to) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid);
        mergeSort(a, tmp, mid, to);
        int i = from, j = mid, k = 0;
        while (i < mid && j < to) {
            tmp[k++] = (a[j] < a[i]) ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, 0, a, from, k);
    }

    public static String toString(long[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(a[i]);
        }
        return sb.append(']').toString();
    }

    public static boolean equals(long[] a, long[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(long[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (long v : a) {
            h = 31 * h + (int) (v ^ (v >>> 32));
        }
        return h;
    }

    public static void fill(long[] a, long v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(long[] a, int from, int to, long v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    public static long[] copyOf(long[] a, int n) {
        long[] r = new long[n];
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    public static long[] copyOfRange(long[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        long[] r = new long[to - from];
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static void sort(long[] a) {
        sort(a, 0, a.length);
    }

    public static void sort(long[] a, int from, int to) {
        checkRange(a.length, from, to);
        if (to - from < 2) {
            return;
        }
        long[] tmp = new long[to - from];
        mergeSort(a, tmp, from, to);
    }

    private static void mergeSort(long[] a, long[] tmp, int from, int to) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid);
        mergeSort(a, tmp, mid, to);
        int i = from, j = mid, k = 0;
        while (i < mid && j < to) {
            tmp[k++] = (a[j] < a[i]) ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, 0, a, from, k);
    }

    public static String toString(float[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(a[i]);
        }
        return sb.append(']').toString();
    }

    public static boolean equals(float[] a, float[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (Float.floatToIntBits(a[i]) != Float.floatToIntBits(b[i])) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(float[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (float v : a) {
            h = 31 * h + Float.floatToIntBits(v);
        }
        return h;
    }

    public static void fill(float[] a, float v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(float[] a, int from, int to, float v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    public static float[] copyOf(float[] a, int n) {
        float[] r = new float[n];
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    public static float[] copyOfRange(float[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        float[] r = new float[to - from];
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static void sort(float[] a) {
        sort(a, 0, a.length);
    }

    public static void sort(float[] a, int from, int to) {
        checkRange(a.length, from, to);
        if (to - from < 2) {
            return;
        }
        float[] tmp = new float[to - from];
        mergeSort(a, tmp, from, to);
    }

    private static void mergeSort(float[] a, float[] tmp, int from, int to) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid);
        mergeSort(a, tmp, mid, to);
        int i = from, j = mid, k = 0;
        while (i < mid && j < to) {
            tmp[k++] = (Float.compare(a[j], a[i]) < 0) ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, 0, a, from, k);
    }

    public static String toString(double[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(a[i]);
        }
        return sb.append(']').toString();
    }

    public static boolean equals(double[] a, double[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (Double.doubleToLongBits(a[i]) != Double.doubleToLongBits(b[i])) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(double[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (double v : a) {
            h = 31 * h + (int) (Double.doubleToLongBits(v) ^ (Double.doubleToLongBits(v) >>> 32));
        }
        return h;
    }

    public static void fill(double[] a, double v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(double[] a, int from, int to, double v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    public static double[] copyOf(double[] a, int n) {
        double[] r = new double[n];
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    public static double[] copyOfRange(double[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        double[] r = new double[to - from];
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static void sort(double[] a) {
        sort(a, 0, a.length);
    }

    public static void sort(double[] a, int from, int to) {
        checkRange(a.length, from, to);
        if (to - from < 2) {
            return;
        }
        double[] tmp = new double[to - from];
        mergeSort(a, tmp, from, to);
    }

    private static void mergeSort(double[] a, double[] tmp, int from, int to) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid);
        mergeSort(a, tmp, mid, to);
        int i = from, j = mid, k = 0;
        while (i < mid && j < to) {
            tmp[k++] = (Double.compare(a[j], a[i]) < 0) ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, 0, a, from, k);
    }

    public static String toString(Object[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(String.valueOf(a[i]));
        }
        return sb.append(']').toString();
    }

    public static String deepToString(Object[] a) {
        if (a == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder();
        deepToString(a, sb, new ArrayList<Object[]>());
        return sb.toString();
    }

    private static void deepToString(Object[] a, StringBuilder sb, List<Object[]> seen) {
        seen.add(a);
        sb.append('[');
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            Object e = a[i];
            if (e == null) {
                sb.append("null");
            } else if (e instanceof Object[]) {
                boolean cycle = false;
                for (Object[] s : seen) {
                    cycle |= s == e;
                }
                if (cycle) {
                    sb.append("[...]");
                } else {
                    deepToString((Object[]) e, sb, seen);
                }
            } else if (e instanceof boolean[]) {
                sb.append(toString((boolean[]) e));
            } else if (e instanceof byte[]) {
                sb.append(toString((byte[]) e));
            } else if (e instanceof char[]) {
                sb.append(toString((char[]) e));
            } else if (e instanceof short[]) {
                sb.append(toString((short[]) e));
            } else if (e instanceof int[]) {
                sb.append(toString((int[]) e));
            } else if (e instanceof long[]) {
                sb.append(toString((long[]) e));
            } else if (e instanceof float[]) {
                sb.append(toString((float[]) e));
            } else if (e instanceof double[]) {
                sb.append(toString((double[]) e));
            } else {
                sb.append(e.toString());
            }
        }
        sb.append(']');
        seen.remove(seen.size() - 1);
    }

    public static boolean equals(Object[] a, Object[] b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] == null ? b[i] != null : !a[i].equals(b[i])) {
                return false;
            }
        }
        return true;
    }

    public static int hashCode(Object[] a) {
        if (a == null) {
            return 0;
        }
        int h = 1;
        for (Object v : a) {
            h = 31 * h + (v == null ? 0 : v.hashCode());
        }
        return h;
    }

    public static void fill(Object[] a, Object v) {
        for (int i = 0; i < a.length; i++) {
            a[i] = v;
        }
    }

    public static void fill(Object[] a, int from, int to, Object v) {
        checkRange(a.length, from, to);
        for (int i = from; i < to; i++) {
            a[i] = v;
        }
    }

    @SuppressWarnings("unchecked")
    public static <T> T[] copyOf(T[] a, int n) {
        T[] r = (T[]) java.lang.reflect.Array.newInstance(a.getClass().getComponentType(), n);
        System.arraycopy(a, 0, r, 0, Math.min(n, a.length));
        return r;
    }

    @SuppressWarnings("unchecked")
    public static <T> T[] copyOfRange(T[] a, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException(from + " > " + to);
        }
        if (from < 0 || from > a.length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        T[] r = (T[]) java.lang.reflect.Array.newInstance(a.getClass().getComponentType(), to - from);
        System.arraycopy(a, from, r, 0, Math.min(to, a.length) - from);
        return r;
    }

    public static void sort(Object[] a) {
        sort(a, null);
    }

    public static <T> void sort(T[] a, Comparator<? super T> c) {
        if (a.length < 2) {
            return;
        }
        Object[] tmp = new Object[a.length];
        mergeSort(a, tmp, 0, a.length, c);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void mergeSort(Object[] a, Object[] tmp, int from, int to, Comparator c) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid, c);
        mergeSort(a, tmp, mid, to, c);
        int i = from, j = mid, k = 0;
        while (i < mid && j < to) {
            int d = c != null ? c.compare(a[j], a[i]) : ((Comparable) a[j]).compareTo(a[i]);
            tmp[k++] = d < 0 ? a[j++] : a[i++];
        }
        while (i < mid) {
            tmp[k++] = a[i++];
        }
        while (j < to) {
            tmp[k++] = a[j++];
        }
        System.arraycopy(tmp, 0, a, from, k);
    }

    /** A fixed-size list backed by the array (writes go through to it). */
    @SafeVarargs
    public static <T> List<T> asList(T... a) {
        return new ArrayView<T>(a);
    }

    private static final class ArrayView<E> extends AbstractList<E> implements java.io.Serializable {
        private final E[] a;

        ArrayView(E[] a) {
            if (a == null) {
                throw new NullPointerException();
            }
            this.a = a;
        }

        public int size() {
            return a.length;
        }

        public E get(int i) {
            return a[i];
        }

        public E set(int i, E e) {
            E old = a[i];
            a[i] = e;
            return old;
        }
    }

    private static void checkRange(int length, int from, int to) {
        if (from > to) {
            throw new IllegalArgumentException("fromIndex(" + from + ") > toIndex(" + to + ")");
        }
        if (from < 0) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + from);
        }
        if (to > length) {
            throw new ArrayIndexOutOfBoundsException("Array index out of range: " + to);
        }
    }
}
