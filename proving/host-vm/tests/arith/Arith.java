/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * Arithmetic and control flow: int, long, float and double operations (overflow, shifts,
 * conversions, NaN and infinities, remainders), integer division by zero, switch (dense and
 * sparse, on strings too), loops with break and continue, arrays of every primitive type and of
 * references, and the exceptions the VM throws for bad array indices, casts and null receivers.
 * Floating-point results are printed as their bits too, so a wrong last bit shows.
 */
public class Arith {
    static int zero = 0;
    static long lzero = 0L;

    static String hex(double d) {
        return Long.toHexString(Double.doubleToRawLongBits(d));
    }

    static String hex(float f) {
        return Integer.toHexString(Float.floatToRawIntBits(f));
    }

    static void ints() {
        int a = 1234567, b = -89;
        int max = Integer.MAX_VALUE, min = Integer.MIN_VALUE;
        System.out.println("int " + (a + b) + " " + (a - b) + " " + (a * b) + " " + (a / b) + " "
                + (a % b) + " " + (-a / 7) + " " + (-a % 7) + " " + (max + 1) + " " + (min - 1)
                + " " + (max * 2) + " " + (min / -1) + " " + (min % -1));
        System.out.println("int bits " + (a & b) + " " + (a | b) + " " + (a ^ b) + " " + (~a) + " "
                + (a << 5) + " " + (b >> 3) + " " + (b >>> 3) + " " + (1 << 33) + " " + (b >> 35)
                + " " + (-b >>> 36));
        System.out.println("int conv " + (byte) 200 + " " + (short) 70000 + " " + (char) 65601
                + " " + (int) 'Z' + " " + (long) min + " " + (float) max + " " + (double) min
                + " " + (int) 3.99 + " " + (int) -3.99 + " " + (int) Double.NaN + " "
                + (int) 1e20 + " " + (int) -1e20f + " " + ((char) -1 + 0));
    }

    static void longs() {
        long a = 123456789012345L, b = -987654321L;
        long max = Long.MAX_VALUE, min = Long.MIN_VALUE;
        System.out.println("long " + (a + b) + " " + (a - b) + " " + (a * b) + " " + (a / b) + " "
                + (a % b) + " " + (max + 1) + " " + (min - 1) + " " + (min / -1) + " "
                + (min % -1L) + " " + (a * a));
        System.out.println("long bits " + (a & b) + " " + (a | b) + " " + (a ^ b) + " " + (~a) + " "
                + (a << 17) + " " + (b >> 7) + " " + (b >>> 7) + " " + (1L << 65) + " "
                + (b >> 70) + " " + Long.toHexString(a * 0x9E3779B97F4A7C15L));
        System.out.println("long conv " + (int) a + " " + (short) a + " " + (long) 1e19 + " "
                + (long) -1e19 + " " + (long) Float.NaN + " " + (double) max + " " + (float) a);
    }

    static void floats() {
        float x = 1.1f, y = 3.0f;
        double p = 1.1, q = 3.0;
        System.out.println("float " + (x + y) + " " + (x * y) + " " + hex(x / y) + " " + (x - y)
                + " " + (7.5f % 2f) + " " + (-7.5f % 2f) + " " + (x / 0f) + " " + (-x / 0f) + " "
                + Float.isNaN(0f / 0f) + " " + hex(x * x * x) + " " + (float) p);
        System.out.println("double " + (p + q) + " " + hex(p * q) + " " + hex(p / q) + " " + (p - q)
                + " " + (7.5 % 2) + " " + (-7.5 % -2) + " " + (p / 0) + " " + (-p / 0) + " "
                + (0.0 == -0.0) + " " + hex(-0.0) + " " + hex(Math.sqrt(q)) + " " + (double) x);
        double nan = Double.NaN;
        System.out.println("compare " + (nan < 1) + " " + (nan > 1) + " " + (nan == nan) + " "
                + (nan != nan) + " " + Double.compare(0.0, -0.0) + " " + Float.compare(x, y) + " "
                + Double.compare(nan, 1.0) + " " + (1e308 * 10) + " " + (Double.MIN_VALUE / 2)
                + " " + hex(1.0 / 3.0) + " " + hex(2.0f / 3.0f));
        double acc = 0;
        for (int i = 1; i <= 1000; i++) {
            acc += 1.0 / i;
        }
        float facc = 0;
        for (int i = 1; i <= 1000; i++) {
            facc += 1.0f / i;
        }
        System.out.println("harmonic " + hex(acc) + " " + hex(facc));
    }

    static void division() {
        try {
            System.out.println(5 / zero);
        } catch (ArithmeticException e) {
            System.out.println("int / 0: " + e.getClass().getName() + ": " + e.getMessage());
        }
        try {
            System.out.println(5 % zero);
        } catch (ArithmeticException e) {
            System.out.println("int % 0: " + e.getMessage());
        }
        try {
            System.out.println(5L / lzero);
        } catch (ArithmeticException e) {
            System.out.println("long / 0: " + e.getMessage());
        }
        try {
            System.out.println(5L % lzero);
        } catch (ArithmeticException e) {
            System.out.println("long % 0: " + e.getMessage());
        }
        System.out.println("double / 0: " + (5.0 / zero) + " " + (5.0 % zero));
    }

    static String dense(int i) {
        switch (i) {
            case 0: return "zero";
            case 1: return "one";
            case 2: return "two";
            case 3: return "three";
            case 4:
            case 5: return "four-or-five";
            default: return "many";
        }
    }

    static int sparse(int i) {
        switch (i) {
            case -1000000: return 1;
            case -5: return 2;
            case 17: return 3;
            case 4096: return 4;
            case Integer.MAX_VALUE: return 5;
            default: return 0;
        }
    }

    static int fallThrough(int i) {
        int r = 0;
        switch (i) {
            case 1: r += 1;
            case 2: r += 10;
            case 3: r += 100; break;
            case 4: r += 1000;
            default: r += 10000;
        }
        return r;
    }

    static String strings(String s) {
        switch (s) {
            case "alpha": return "A";
            case "beta": return "B";
            case "Aa": return "hash-collides-with-BB(Aa)";
            case "BB": return "hash-collides-with-Aa(BB)";
            default: return "?";
        }
    }

    static void control() {
        StringBuilder sb = new StringBuilder();
        for (int i = -1; i <= 6; i++) {
            sb.append(dense(i)).append(',');
        }
        System.out.println("switch " + sb + " " + sparse(-1000000) + sparse(-5) + sparse(17)
                + sparse(4096) + sparse(Integer.MAX_VALUE) + sparse(18) + " " + fallThrough(1)
                + " " + fallThrough(2) + " " + fallThrough(4) + " " + fallThrough(9) + " "
                + strings("alpha") + strings("beta") + " " + strings("Aa") + " " + strings("BB")
                + " " + strings("gamma"));
        int found = -1;
        outer:
        for (int i = 0; i < 10; i++) {
            for (int j = 0; j < 10; j++) {
                if (i * j == 42) {
                    found = i * 10 + j;
                    break outer;
                }
            }
        }
        int odd = 0, n = 0;
        while (true) {
            n++;
            if (n > 99) {
                break;
            }
            if (n % 2 == 0) {
                continue;
            }
            odd += n;
        }
        int k = 0, steps = 0;
        do {
            k = (k * 7 + 3) % 101;
            steps++;
        } while (k != 0 && steps < 1000);
        long collatz = 27;
        int c = 0;
        while (collatz != 1) {
            collatz = (collatz & 1) == 0 ? collatz / 2 : 3 * collatz + 1;
            c++;
        }
        System.out.println("loops " + found + " " + odd + " " + steps + " " + c + " "
                + (odd > 100 ? "big" : "small") + " " + (odd > 100 && c < 10 || steps > 0));
    }

    static void arrays() {
        boolean[] zs = new boolean[3];
        byte[] bs = new byte[3];
        char[] cs = new char[3];
        short[] ss = new short[3];
        int[] is = new int[3];
        long[] ls = new long[3];
        float[] fs = new float[3];
        double[] ds = new double[3];
        String[] strs = new String[3];
        Object[] objs = new Object[3];
        System.out.println("defaults " + zs[1] + " " + bs[1] + " " + (int) cs[1] + " " + ss[1] + " "
                + is[1] + " " + ls[1] + " " + fs[1] + " " + ds[1] + " " + strs[1] + " " + objs[1]);
        for (int i = 0; i < 3; i++) {
            zs[i] = i % 2 == 0;
            bs[i] = (byte) (120 + i * 5);
            cs[i] = (char) ('x' + i);
            ss[i] = (short) (32760 + i * 5);
            is[i] = Integer.MAX_VALUE - i;
            ls[i] = Long.MIN_VALUE + i;
            fs[i] = i / 4f;
            ds[i] = i * 1.5;
            strs[i] = "s" + i;
            objs[i] = i == 0 ? (Object) strs : i == 1 ? (Object) Integer.valueOf(i) : (Object) ds;
        }
        System.out.println("values " + zs[0] + zs[1] + zs[2] + " " + bs[0] + "," + bs[1] + ","
                + bs[2] + " " + new String(cs) + " " + ss[0] + "," + ss[1] + "," + ss[2] + " "
                + is[2] + " " + ls[2] + " " + fs[1] + "," + fs[2] + " " + ds[2] + " " + strs[2]
                + " " + (objs[0] == strs) + " " + objs[1] + " " + (((double[]) objs[2])[1]));
        System.out.println("classes " + zs.getClass().getName() + bs.getClass().getName()
                + cs.getClass().getName() + ss.getClass().getName() + is.getClass().getName()
                + ls.getClass().getName() + fs.getClass().getName() + ds.getClass().getName() + " "
                + strs.getClass().getName() + " " + objs.getClass().getName() + " "
                + new int[2][3].getClass().getName() + " " + (strs instanceof Object[]) + " "
                + is.getClass().getComponentType() + " " + new long[0].length);
        int[][] tri = new int[5][];
        int total = 0;
        for (int i = 0; i < tri.length; i++) {
            tri[i] = new int[i + 1];
            tri[i][0] = tri[i][i] = 1;
            for (int j = 1; j < i; j++) {
                tri[i][j] = tri[i - 1][j - 1] + tri[i - 1][j];
            }
            for (int v : tri[i]) {
                total += v;
            }
        }
        long[] big = new long[100000];
        for (int i = 0; i < big.length; i++) {
            big[i] = (long) i * i;
        }
        long bigSum = 0;
        for (long v : big) {
            bigSum += v;
        }
        char[] chars = "hello".toCharArray();
        char[] copy = new char[8];
        System.arraycopy((Object) chars, 1, (Object) copy, 2, 4);
        Object[] shifted = {"a", "b", "c", "d"};
        System.arraycopy(shifted, 0, shifted, 1, 3);
        System.out.println("more " + tri[4][2] + " " + total + " " + bigSum + " " + copy[2]
                + copy[5] + " " + (int) copy[0] + " " + shifted[0] + shifted[1] + shifted[2]
                + shifted[3] + " " + is.clone()[2] + " " + (is.clone() != is));
    }

    static void thrown() {
        int[] small = new int[4];
        String[] names = new String[2];
        try {
            small[4] = 1;
        } catch (ArrayIndexOutOfBoundsException e) {
            System.out.println("AIOOBE " + e.getMessage());
        }
        try {
            System.out.println(names[-1]);
        } catch (ArrayIndexOutOfBoundsException e) {
            System.out.println("AIOOBE " + e.getMessage() + " " + (e instanceof IndexOutOfBoundsException));
        }
        try {
            int[] neg = new int[zero - 3];
            System.out.println(neg.length);
        } catch (NegativeArraySizeException e) {
            System.out.println("NASE " + e.getMessage());
        }
        try {
            Object[] objs = names;
            objs[0] = Integer.valueOf(1);
        } catch (ArrayStoreException e) {
            System.out.println("ASE " + e.getMessage());
        }
        try {
            Object o = Integer.valueOf(7);
            String s = (String) o;
            System.out.println(s);
        } catch (ClassCastException e) {
            System.out.println("CCE " + e.getMessage());
        }
        try {
            Object o = new int[1];
            Object[] arr = (Object[]) o;
            System.out.println(arr);
        } catch (ClassCastException e) {
            System.out.println("CCE " + e.getMessage());
        }
        try {
            String s = names[0];
            System.out.println(s.length());
        } catch (NullPointerException e) {
            System.out.println("NPE on a call " + (e.getMessage() != null));
        }
        try {
            int[] nul = null;
            System.out.println(nul[0]);
        } catch (NullPointerException e) {
            System.out.println("NPE on an array read");
        }
        try {
            int[] nul = null;
            System.out.println(nul.length);
        } catch (NullPointerException e) {
            System.out.println("NPE on array length");
        }
        try {
            Arith a = null;
            a.field = 3;
        } catch (NullPointerException e) {
            System.out.println("NPE on a field write");
        }
        try {
            Object lock = null;
            synchronized (lock) {
                System.out.println("never");
            }
        } catch (NullPointerException e) {
            System.out.println("NPE on monitor-enter");
        }
        try {
            throw null;
        } catch (NullPointerException e) {
            System.out.println("NPE on throw null");
        }
        RuntimeException re = new RuntimeException("my message");
        System.out.println("RuntimeException " + re.getMessage() + " | " + re + " | "
                + new RuntimeException().getMessage() + " | "
                + new RuntimeException("outer", re).getCause().getMessage() + " | "
                + new IllegalStateException(re).getMessage());
    }

    int field;

    public static void main(String[] args) {
        ints();
        longs();
        floats();
        division();
        control();
        arrays();
        thrown();
    }
}
