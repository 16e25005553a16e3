/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package plugin;

/** A plugin class; the other plugin has one of the same shape (so its methods fit the same
 * space when ART allocates them where this one's were). */
public class Beta implements Runnable {
    public static int stepCalls;
    public static int runCalls;

    static int step(int x) {
        stepCalls++;
        return x * 7 + 3;
    }

    public void run() {
        runCalls++;
        int s = 0;
        for (int i = 0; i < 10; i++) {
            s += step(i);
        }
        if (s == 42) {
            throw new IllegalStateException();
        }
    }

    public String toString() {
        return "Beta steps " + stepCalls + " runs " + runCalls;
    }
}
