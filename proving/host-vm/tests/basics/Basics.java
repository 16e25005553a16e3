/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import java.util.ArrayList;
import java.util.List;

/**
 * What mini-core promises beyond Hello world, on ART: strings, numbers and their formatting,
 * exceptions with stack traces, threads (start/join, synchronized, wait/notify), arrays, a hot
 * loop long enough for the JIT, and an exit status.
 */
public class Basics {
    interface Shape {
        double area();
    }

    static final class Square implements Shape {
        private final double side;

        Square(double side) {
            this.side = side;
        }

        public double area() {
            return side * side;
        }

        public String toString() {
            return "Square(" + side + ")";
        }
    }

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    static long hot(int rounds) {
        long acc = 0;
        for (int i = 0; i < rounds; i++) {
            acc += mix(i);
        }
        return acc;
    }

    static long mix(int i) {
        return (i * 31L) ^ (i >>> 3);
    }

    private static int counter;

    static void fail(int depth) {
        if (depth == 0) {
            throw new IllegalStateException("deep");
        }
        fail(depth - 1);
    }

    public static void main(String[] args) throws Exception {
        // Strings
        String s = "Hello" + ", " + "ART";
        System.out.println(s + " " + s.length() + " " + s.indexOf("ART") + " " + s.charAt(1)
                + " " + s.substring(7) + " " + s.toUpperCase() + " " + s.replace('l', 'L'));
        System.out.println("split " + String.join("|", "a,b,,c".split(",")) + " " + "x".repeat(3)
                + " " + "  trim  ".trim() + "." + " " + "abc".compareTo("abd")
                + " " + "Hello".equals("Hel" + "lo") + " " + "Hello".hashCode());
        System.out.println(String.format("%d-%5s-%-4s|%x %c %b%n", 7, "ab", "cd", 255, 'z', true).trim());
        System.out.println(new String(new char[] {'c', 'h', 'a', 'r', 's'}) + " "
                + new String("bytes".getBytes()) + " " + "\u00e9t\u00e9".getBytes().length);

        // Numbers
        System.out.println(Integer.MAX_VALUE + " " + Long.MIN_VALUE + " " + Integer.toHexString(-1)
                + " " + Long.toBinaryString(10) + " " + Integer.parseInt("-123") + " "
                + Long.parseLong("9000000000") + " " + Integer.bitCount(255) + " "
                + Long.numberOfTrailingZeros(64) + " " + Integer.reverse(1));
        System.out.println(1.0 + " " + 0.1 + " " + (0.1 + 0.2) + " " + 1e10 + " " + 1.5e-5 + " "
                + (float) 1.1 + " " + Double.parseDouble("2.5e3") + " " + (1.0 / 0) + " "
                + Double.isNaN(0.0 / 0) + " " + Math.sqrt(2) + " " + Math.round(2.5) + " "
                + Math.max(-0.0, 0.0) + " " + Math.abs(-7) + " " + Math.pow(2, 10) + " "
                + Math.floor(-1.5) + " " + Math.sin(0));
        Object[] boxes = {Integer.valueOf(3), Long.valueOf(4), Character.valueOf('c'), Boolean.TRUE,
            Double.valueOf(1.25), Float.valueOf(2.5f), Short.valueOf((short) 6), Byte.valueOf((byte) 7)};
        StringBuilder sb = new StringBuilder();
        for (Object o : boxes) {
            sb.append(o).append(':').append(o.getClass().getSimpleName()).append(' ');
        }
        System.out.println(sb.toString().trim());

        // Objects, interfaces, arrays
        Shape sq = new Square(3);
        System.out.println(sq + " area " + sq.area() + " " + (sq instanceof Shape) + " "
                + Shape.class.isAssignableFrom(Square.class) + " " + Square.class.getName());
        int[] arr = new int[10];
        for (int i = 0; i < arr.length; i++) {
            arr[i] = i * i;
        }
        int[] copy = arr.clone();
        System.arraycopy(arr, 0, copy, 1, 5);
        System.out.println(copy[0] + " " + copy[5] + " " + copy[9] + " " + arr.length + " "
                + new long[2][3][1].length + " " + int[].class.getName() + " "
                + String[][].class.getSimpleName());
        List<String> list = new ArrayList<String>();
        list.add("one");
        list.add("two");
        list.add(0, "zero");
        System.out.println(list + " " + list.size() + " " + list.contains("two"));

        // Exceptions
        try {
            fail(3);
        } catch (IllegalStateException e) {
            StackTraceElement[] trace = e.getStackTrace();
            System.out.println("caught " + e + " frames>=5 " + (trace.length >= 5) + " top "
                    + trace[0].getMethodName() + " " + trace[0].getClassName());
        }
        try {
            Object o = null;
            o.hashCode();
        } catch (NullPointerException e) {
            System.out.println("NPE " + (e.getMessage() != null));
        }
        try {
            int[] small = new int[1];
            small[2] = 1;
        } catch (ArrayIndexOutOfBoundsException e) {
            System.out.println("AIOOBE " + e.getMessage());
        }
        try {
            Object o = "str";
            Integer i = (Integer) o;
            System.out.println(i);
        } catch (ClassCastException e) {
            System.out.println("CCE " + e.getMessage());
        }
        try {
            System.out.println(10 / (args.length));
        } catch (ArithmeticException e) {
            System.out.println("AE " + e.getMessage());
        }
        try {
            Class.forName("does.not.Exist");
        } catch (ClassNotFoundException e) {
            System.out.println("CNFE " + e.getMessage());
        }

        // Threads
        final Object lock = new Object();
        Thread[] workers = new Thread[4];
        for (int t = 0; t < workers.length; t++) {
            workers[t] = new Thread(new Runnable() {
                public void run() {
                    for (int i = 0; i < 10000; i++) {
                        synchronized (lock) {
                            counter++;
                        }
                    }
                }
            }, "worker-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        System.out.println("counter " + counter + " alive " + workers[0].isAlive() + " "
                + workers[3].getName());
        final int[] box = new int[1];
        Thread waiter = new Thread(new Runnable() {
            public void run() {
                synchronized (lock) {
                    while (box[0] == 0) {
                        try {
                            lock.wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    box[0]++;
                }
            }
        });
        waiter.start();
        Thread.sleep(20);
        synchronized (lock) {
            box[0] = 1;
            lock.notifyAll();
        }
        waiter.join();
        System.out.println("notified " + box[0]);

        // An exception that ends a thread goes to the uncaught-exception handler (ART calls
        // Thread.dispatchUncaughtException).
        final String[] seen = new String[1];
        Thread.setDefaultUncaughtExceptionHandler(new Thread.UncaughtExceptionHandler() {
            public void uncaughtException(Thread t, Throwable e) {
                seen[0] = t.getName() + ": " + e;
            }
        });
        Thread thrower = new Thread(new Runnable() {
            public void run() {
                throw new UnsupportedOperationException("from a thread");
            }
        }, "thrower");
        thrower.start();
        thrower.join();
        System.out.println("uncaught " + seen[0]);

        // Garbage: about 256 MiB allocated in all, far beyond what the heap keeps.
        long checksum = 0;
        byte[] keep = null;
        for (int i = 0; i < 256 * 1024; i++) {
            byte[] b = new byte[1024];
            b[i & 1023] = (byte) i;
            checksum += b[i & 1023];
            if ((i & 0xffff) == 0) {
                keep = b;
            }
        }
        System.out.println("garbage " + checksum + " " + (keep != null));

        // Hot code (the JIT's business in --mode jit)
        long t0 = System.nanoTime();
        System.out.println("fib " + fib(24) + " hot " + hot(2000000));
        System.out.println("elapsed>0 " + (System.nanoTime() - t0 > 0) + " now>2020 "
                + (System.currentTimeMillis() > 1577836800000L));
        System.exit(3);
    }
}
