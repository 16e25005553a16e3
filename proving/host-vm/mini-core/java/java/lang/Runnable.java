/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** Code a Thread runs. */
public interface Runnable {
    void run();
}
