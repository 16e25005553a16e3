/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * On-stack replacement: methods that are called once and spend long in a loop. In --mode jit the
 * loop's back edges make the method hot while it runs; ART compiles an OSR version and jumps into
 * it from nterp in the middle of the loop (-verbose:jit logs "Jumping to METHOD@PC" at INFO:
 * expected-log-jit.txt; "Done running OSR code" is logged only on the switch interpreter's
 * path, Jit::MaybeDoOnStackReplacement, not on nterp's), carrying over every live value: ints,
 * longs, floats, doubles and references. The printed results are the same in every mode. After
 * the OSR code returns, the same method throws and catches (from compiled code) and a second loop
 * nested in the first runs to its end.
 */
public class OsrLoop {
    static long loop(int n, int salt) {
        long acc = 17;
        int i32 = salt;
        double d = 0.5;
        float f = 1.25f;
        String s = "start";
        int[] counts = new int[4];
        for (int i = 0; i < n; i++) {
            acc = acc * 31 + (i ^ (acc >>> 7));
            i32 += (int) acc & 0xff;
            d = d * 0.999999 + (i & 7);
            f += (i & 1) == 0 ? 0.5f : -0.25f;
            counts[i & 3]++;
            if (i == n / 2) {
                s = "half:" + acc;
            }
        }
        System.out.println("loop " + n + ": acc " + acc + " i32 " + i32 + " d "
                + Long.toHexString(Double.doubleToRawLongBits(d)) + " f "
                + Integer.toHexString(Float.floatToRawIntBits(f)) + " s " + s + " counts "
                + counts[0] + "," + counts[1] + "," + counts[2] + "," + counts[3]);
        return acc ^ i32;
    }

    static int nested(int outer, int inner) {
        int total = 0;
        int thrown = 0;
        for (int o = 0; o < outer; o++) {
            for (int i = 0; i < inner; i++) {
                total += (o * inner + i) % 7;
            }
            try {
                if (o % 100 == 99) {
                    throw new IllegalStateException("round " + o);
                }
            } catch (IllegalStateException e) {
                thrown++;
            }
        }
        return total * 1000 + thrown;
    }

    static String objects(int n) {
        StringBuilder last = null;
        Object[] ring = new Object[5];
        for (int i = 0; i < n; i++) {
            ring[i % 5] = (i % 3 == 0) ? (Object) Integer.valueOf(i) : (Object) ("s" + (i & 15));
            if (i % 1000000 == 0) {
                last = new StringBuilder().append(i);
            }
        }
        StringBuilder sb = new StringBuilder(last);
        for (Object o : ring) {
            sb.append(' ').append(o);
        }
        return sb.toString();
    }

    public static void main(String[] args) {
        long r = loop(3000000, 5);
        System.out.println("returned " + r);
        System.out.println("nested " + nested(10000, 1000));
        System.out.println("objects " + objects(2000000));
    }
}
