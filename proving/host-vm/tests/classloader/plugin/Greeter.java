/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package plugin;

/** A class of the second dex, loaded by ClassLoaders.java through its own PathClassLoader. */
public class Greeter implements Runnable {
    static int instances;
    private final int serial;

    public Greeter() {
        serial = ++instances;
    }

    public void run() {
        System.out.println("plugin.Greeter#" + serial + " runs, loaded by "
                + getClass().getClassLoader().getClass().getName() + ", helper says "
                + new Helper().say());
    }

    public String toString() {
        return "Greeter#" + serial + " of " + instances;
    }
}
