/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent;

/** Runs the Runnables it is given, when and where it decides. */
public interface Executor {
    void execute(Runnable command);
}
