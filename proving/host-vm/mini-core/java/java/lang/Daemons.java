/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * The runtime's helper threads. ART calls start() once the runtime is up (Runtime::Start ->
 * StartDaemonThreads) and stop() while it shuts down. mini-core starts none yet: the heap still
 * collects when allocation needs it (background/concurrent collections and finalizers wait for a
 * HeapTaskDaemon / FinalizerDaemon).
 */
public final class Daemons {
    private static boolean started;

    private Daemons() {
    }

    public static void start() {
        started = true;
    }

    public static void startPostZygoteFork() {
        start();
    }

    public static void stop() {
        started = false;
    }

    public static void waitForDaemonStart() {
    }

    // @generated-members
}
