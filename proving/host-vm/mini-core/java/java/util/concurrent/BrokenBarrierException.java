/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent;

/** CyclicBarrier.await's declared exception (this barrier never breaks). */
public class BrokenBarrierException extends Exception {
    private static final long serialVersionUID = 1L;

    public BrokenBarrierException() {
    }

    public BrokenBarrierException(String message) {
        super(message);
    }
}
