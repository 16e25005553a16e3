/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * Exceptions thrown and caught across interpreted and compiled frames. Methods are first made hot
 * (in --mode jit they are compiled: the JIT threshold is 100) and then throw through frames of
 * cold methods that never ran before (interpreted), and cold methods throw through hot ones; the
 * hot code also throws implicitly (null receivers, division by zero, bad indices, which compiled
 * code detects with its own checks or through the fault handler), catches, rethrows, wraps with
 * causes and runs finally blocks. Stack traces (method names and line numbers) must be the same
 * whether a frame is interpreted, compiled or inlined, so they are printed. Nothing here depends
 * on timing: whether the JIT has finished a method when it is used does not change the output.
 * In --mode jit, expected-log-jit.txt wants ART's -verbose:jit lines showing that the hot methods
 * were compiled (optimized); the cold ones never run often enough to be.
 */
public class Exceptions {
    static int sink;
    static StringBuilder log = new StringBuilder();

    // ---- hot methods: called many times before the interesting calls

    static int hotThrower(int x) {
        if (x < 0) {
            throw new IllegalStateException("negative " + x);
        }
        return x * 2;
    }

    static int hotCatcher(int x) {
        try {
            return coldOrHot(x);
        } catch (IllegalArgumentException e) {
            return -1;
        } finally {
            sink++;
        }
    }

    static int coldOrHot(int x) {
        if (x == -7) {
            return coldThrowerA(3);
        }
        return x + 1;
    }

    static int hotImplicit(Object[] objs, int[] ints, int i, int div) {
        int r = 0;
        try {
            r += objs[i].hashCode() & 1;      // NPE when objs[i] == null
            r += ints[i];                     // AIOOBE when i >= ints.length
            r += 1000 / div;                  // ArithmeticException when div == 0
            r += ((String) objs[i]).length(); // CCE when objs[i] is not a String
        } catch (NullPointerException e) {
            r = -1;
        } catch (ArrayIndexOutOfBoundsException e) {
            r = -2;
        } catch (ArithmeticException e) {
            r = -3;
        } catch (ClassCastException e) {
            r = -4;
        }
        return r;
    }

    static int hotRethrow(int x) {
        try {
            return hotThrower(x);
        } catch (IllegalStateException e) {
            throw new RuntimeException("wrapped", e);
        }
    }

    static int hotFinally(int x) {
        int r = 0;
        try {
            try {
                r = hotThrower(x);
            } finally {
                r += 100;
            }
        } catch (IllegalStateException e) {
            r = -r;
        }
        return r;
    }

    // ---- cold methods: each runs only in the interesting calls

    static int coldThrowerA(int depth) {
        return coldThrowerB(depth);
    }

    static int coldThrowerB(int depth) {
        if (depth == 0) {
            throw new IllegalArgumentException("from cold code");
        }
        return coldThrowerB(depth - 1);
    }

    static int cold1(int x) {
        return cold2(x) + 1;
    }

    static int cold2(int x) {
        return hotThrower(x) + 1;
    }

    static void coldCatchAndRethrow() {
        try {
            hotRethrow(-3);
        } catch (RuntimeException e) {
            log.append("cold caught [").append(e.getMessage()).append(" <- ")
                    .append(e.getCause().getMessage()).append("] ");
            throw new UnsupportedOperationException("rethrown by cold code", e);
        }
    }

    static int recurse(int n) {
        return n <= 0 ? hotThrower(-n - 1) : recurse(n - 1) + 1;
    }

    static String trace(Throwable t, int frames) {
        StringBuilder sb = new StringBuilder();
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < frames && i < st.length; i++) {
            sb.append(i == 0 ? "" : " < ").append(st[i].getMethodName()).append(':')
                    .append(st[i].getLineNumber());
        }
        return sb.toString();
    }

    public static void main(String[] args) {
        // Warm-up: make the hot methods hot (compiled in --mode jit), never throwing from
        // coldThrower*, cold1/cold2 or coldCatchAndRethrow.
        Object[] objs = {"ab", "cde", null, Integer.valueOf(5), "fghi"};
        int[] ints = {1, 2, 3};
        long warm = 0;
        for (int i = 0; i < 50000; i++) {
            warm += hotThrower(i & 1023);
            warm += hotCatcher(i & 255);
            warm += hotImplicit(objs, ints, i % 5, (i % 7) - 1 + (i % 7 == 1 ? 1 : 0));
            warm += hotFinally(i & 15);
            warm += hotRethrow(i & 31);
            if ((i & 63) == 0) {
                try {
                    hotThrower(-i);
                } catch (IllegalStateException e) {
                    warm += 3;
                }
            }
        }
        System.out.println("warm-up " + warm + " finally ran " + sink);

        // 1. A hot method throws through two cold frames; caught here.
        try {
            cold1(-5);
        } catch (IllegalStateException e) {
            System.out.println("1 " + e.getMessage() + " | " + trace(e, 4));
        }

        // 2. Cold methods throw through a hot frame (hotCatcher -> coldOrHot -> cold...); the
        //    hot frame catches it and runs its finally.
        int before = sink;
        System.out.println("2 " + hotCatcher(-7) + " finally " + (sink - before));

        // 3. Hot code wraps, cold code catches, rethrows with a cause, caught here.
        try {
            coldCatchAndRethrow();
        } catch (UnsupportedOperationException e) {
            Throwable root = e;
            int depth = 0;
            while (root.getCause() != null) {
                root = root.getCause();
                depth++;
            }
            System.out.println("3 " + log + "| " + e.getMessage() + " | causes " + depth + " | root "
                    + root.getClass().getName() + ": " + root.getMessage() + " | " + trace(root, 3));
        }

        // 4. Implicit exceptions in hot code, every kind, counted.
        Object[] objs2 = {null, "x", Integer.valueOf(1), "yz"};
        int[] counts = new int[5];
        for (int i = 0; i < 20000; i++) {
            int r = hotImplicit(objs2, ints, i & 3, i % 3);
            counts[r < 0 ? -r : 0]++;
        }
        System.out.println("4 ok " + counts[0] + " NPE " + counts[1] + " AIOOBE " + counts[2]
                + " AE " + counts[3] + " CCE " + counts[4]);

        // 5. finally runs on both paths in hot code.
        System.out.println("5 " + hotFinally(4) + " " + hotFinally(-4));

        // 6. A deep mixed stack: 50 frames of a (warm) recursion over a hot thrower.
        int got = 0;
        for (int round = 0; round < 300; round++) {
            try {
                got += recurse(round % 50 == 49 ? 50 : -1);
            } catch (IllegalStateException e) {
                got -= 1000;
                if (round == 299) {
                    StackTraceElement[] st = e.getStackTrace();
                    int recurseFrames = 0;
                    for (StackTraceElement el : st) {
                        if (el.getMethodName().equals("recurse")) {
                            recurseFrames++;
                        }
                    }
                    System.out.println("6 " + e.getMessage() + " recurse frames " + recurseFrames
                            + " top " + trace(e, 2) + " bottom " + st[st.length - 1].getMethodName());
                }
            }
        }
        System.out.println("6 total " + got);

        // 7. An exception out of a hot method, uncaught by everything up to here except this.
        try {
            throw new Error("plain Error", new IllegalStateException("cause"));
        } catch (Error e) {
            System.out.println("7 " + e + " caused by " + e.getCause());
        }
    }
}
