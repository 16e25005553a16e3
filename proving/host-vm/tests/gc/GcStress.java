/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import java.lang.ref.WeakReference;

/**
 * Explicit collections (System.gc() and Runtime.getRuntime().gc(), alternately) from the main
 * thread while 6 threads allocate: each builds linked lists, arrays of every kind and strings,
 * keeps a window of them alive and drops the rest. Whatever the collector moves or frees, the
 * survivors' contents (checksums), identity hash codes and the objects weak references still reach
 * must be unchanged; garbage that only weak references reach must be cleared.
 */
public class GcStress {
    static final class Node {
        final int value;
        final Node next;
        final byte[] payload;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
            this.payload = new byte[(value & 63) + 1];
            this.payload[payload.length - 1] = (byte) value;
        }
    }

    static long listSum(Node n) {
        long s = 0;
        while (n != null) {
            s += n.value + n.payload[n.payload.length - 1];
            n = n.next;
        }
        return s;
    }

    static final class Worker implements Runnable {
        final int id;
        final Object[] window = new Object[64];
        long expected, actual;
        volatile boolean done;

        Worker(int id) {
            this.id = id;
        }

        public void run() {
            for (int round = 0; round < 3000; round++) {
                int v = id * 100000 + round;
                Object o;
                long sum;
                switch (round % 4) {
                    case 0: {
                        Node n = null;
                        for (int i = 0; i < 20; i++) {
                            n = new Node(v + i, n);
                        }
                        o = n;
                        sum = listSum(n);
                        break;
                    }
                    case 1: {
                        int[] a = new int[256 + (round & 255)];
                        for (int i = 0; i < a.length; i++) {
                            a[i] = v ^ i;
                        }
                        o = a;
                        sum = 0;
                        for (int x : a) {
                            sum += x;
                        }
                        break;
                    }
                    case 2: {
                        String s = "w" + id + "-" + round + "-" + Long.toHexString(v * 2654435761L);
                        o = s;
                        sum = s.hashCode();
                        break;
                    }
                    default: {
                        Object[] arr = new Object[8];
                        for (int i = 0; i < arr.length; i++) {
                            arr[i] = Integer.valueOf(v + i * 1000);
                        }
                        o = arr;
                        sum = 0;
                        for (Object x : arr) {
                            sum += (Integer) x;
                        }
                        break;
                    }
                }
                // Garbage on the side: 16 KiB a round.
                byte[] garbage = new byte[16 * 1024];
                garbage[round & 1023] = 1;
                int slot = round & 63;
                Object old = window[slot];
                if (old != null) {
                    actual += check(old);
                }
                window[slot] = o;
                expected += sum;
            }
            for (Object o : window) {
                actual += check(o);
            }
            done = true;
        }

        static long check(Object o) {
            if (o instanceof Node) {
                return listSum((Node) o);
            } else if (o instanceof int[]) {
                long s = 0;
                for (int x : (int[]) o) {
                    s += x;
                }
                return s;
            } else if (o instanceof String) {
                return o.hashCode();
            } else {
                long s = 0;
                for (Object x : (Object[]) o) {
                    s += (Integer) x;
                }
                return s;
            }
        }
    }

    static WeakReference<Object> garbageRef() {
        return new WeakReference<Object>(new int[1000]);
    }

    public static void main(String[] args) throws Exception {
        Object[] survivors = new Object[1000];
        int[] hashes = new int[survivors.length];
        for (int i = 0; i < survivors.length; i++) {
            survivors[i] = i % 2 == 0 ? (Object) ("survivor-" + i) : (Object) new long[] {i, i * i};
            hashes[i] = System.identityHashCode(survivors[i]);
        }
        WeakReference<Object> strongTarget = new WeakReference<Object>(survivors[7]);
        WeakReference<Object> weakOnly = garbageRef();

        Worker[] workers = new Worker[6];
        Thread[] threads = new Thread[workers.length];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i);
            threads[i] = new Thread(workers[i], "alloc-" + i);
            threads[i].start();
        }
        int gcs = 0;
        boolean running = true;
        while (running || gcs < 10) {
            if (gcs % 2 == 0) {
                System.gc();
            } else {
                Runtime.getRuntime().gc();
            }
            gcs++;
            running = false;
            for (Worker w : workers) {
                running |= !w.done;
            }
            if (gcs > 100000) {
                break;
            }
        }
        for (Thread t : threads) {
            t.join();
        }
        System.gc();
        Runtime.getRuntime().gc();

        boolean allMatch = true;
        long total = 0;
        for (Worker w : workers) {
            allMatch &= w.expected == w.actual;
            total += w.expected;
        }
        int hashMismatch = 0, contentMismatch = 0;
        for (int i = 0; i < survivors.length; i++) {
            if (System.identityHashCode(survivors[i]) != hashes[i]) {
                hashMismatch++;
            }
            if (i % 2 == 0 ? !survivors[i].equals("survivor-" + i)
                    : ((long[]) survivors[i])[1] != (long) i * i) {
                contentMismatch++;
            }
        }
        System.out.println("workers' checksums match " + allMatch + ", total " + total);
        System.out.println("explicit collections >= 10 " + (gcs >= 10));
        System.out.println("survivors: identity hash changes " + hashMismatch + ", content changes "
                + contentMismatch);
        System.out.println("weak reference to a survivor kept " + (strongTarget.get() == survivors[7])
                + ", to garbage cleared " + (weakOnly.get() == null));
        long free = Runtime.getRuntime().freeMemory(), totalMem = Runtime.getRuntime().totalMemory();
        System.out.println("memory sane " + (free >= 0 && free <= totalMem
                && totalMem <= Runtime.getRuntime().maxMemory()));
    }
}
