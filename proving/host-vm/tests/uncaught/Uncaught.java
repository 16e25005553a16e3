/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * main ends by an exception: dalvikvm exits with status 1, and when it detaches the main thread
 * ART hands the exception to Thread.dispatchUncaughtException, which prints it on System.err.
 */
public class Uncaught {
    static void level2() {
        throw new IllegalStateException("boom", new ArithmeticException("root cause"));
    }

    static void level1() {
        level2();
    }

    public static void main(String[] args) {
        System.out.println("before");
        level1();
    }
}
