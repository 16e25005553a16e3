/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/** Thrown by an iterator that has no more elements. */
public class NoSuchElementException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NoSuchElementException() {
    }

    public NoSuchElementException(String message) {
        super(message);
    }
}
