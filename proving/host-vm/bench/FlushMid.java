/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * What a flush of a full ring does to the traced thread while it runs: the main thread computes
 * fib(18) round after round, its ring full after a warm-up of at least 1 s; halfway through the
 * timed rounds it asks Hubble for a flush (Thread.setName("HUBBLE:flush:mid")) and goes on at
 * once, as an app does, while the control thread stops its tracing, copies the ring, names the
 * methods and writes the file. Prints the request's wall time and each round's end (ns after the
 * request); flush-while-running pairs them with the file's time.
 *
 *   FlushMid ROUNDS
 */
public class FlushMid {
    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        long sum = 0;
        long warm = System.nanoTime();
        while (System.nanoTime() - warm < 1000000000L) {
            sum += fib(18);
        }
        long[] end = new long[rounds];
        long requestedNs = 0;
        long requestedMs = 0;
        for (int i = 0; i < rounds; i++) {
            if (i == rounds / 2) {
                requestedMs = System.currentTimeMillis();
                requestedNs = System.nanoTime();
                Thread.currentThread().setName("HUBBLE:flush:mid");
            }
            sum += fib(18);
            end[i] = System.nanoTime();
        }
        System.out.println("request_wall_ms " + requestedMs + " half " + (rounds / 2) + " sum " + sum);
        StringBuilder b = new StringBuilder("ends");
        for (int i = 0; i < rounds; i++) {
            b.append(' ').append(end[i] - requestedNs);
        }
        System.out.println(b.toString());
    }
}
