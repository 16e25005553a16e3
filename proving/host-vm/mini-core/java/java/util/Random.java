/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/**
 * Pseudo-random numbers: xorshift64* seeded from the clock and a counter. Not java.util.Random's
 * sequence (a given seed does not give the JDK's numbers), which nothing here relies on.
 */
public class Random implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private static long seeds = 0x2545F4914F6CDD1DL;
    private long state;

    public Random() {
        this(System.nanoTime() ^ nextSeed());
    }

    public Random(long seed) {
        state = seed == 0 ? 0x9E3779B97F4A7C15L : seed;
    }

    private static synchronized long nextSeed() {
        seeds = seeds * 31 + 0x9E3779B97F4A7C15L;
        return seeds;
    }

    public synchronized long nextLong() {
        long x = state;
        x ^= x >>> 12;
        x ^= x << 25;
        x ^= x >>> 27;
        state = x;
        return x * 0x2545F4914F6CDD1DL;
    }

    public int nextInt() {
        return (int) (nextLong() >>> 32);
    }

    public int nextInt(int bound) {
        if (bound <= 0) {
            throw new IllegalArgumentException("bound must be positive");
        }
        return (int) ((nextLong() >>> 33) % bound);
    }

    public boolean nextBoolean() {
        return nextLong() < 0;
    }
}
