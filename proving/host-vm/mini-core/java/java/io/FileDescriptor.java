/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.io;

/** An open file descriptor (ART reads `descriptor`, e.g. for VMDebug's trace files). */
public final class FileDescriptor {
    public static final FileDescriptor in = new FileDescriptor(0);
    public static final FileDescriptor out = new FileDescriptor(1);
    public static final FileDescriptor err = new FileDescriptor(2);

    private int descriptor;

    public FileDescriptor() {
        descriptor = -1;
    }

    FileDescriptor(int fd) {
        descriptor = fd;
    }

    public int getInt$() {
        return descriptor;
    }

    public boolean valid() {
        return descriptor != -1;
    }

    // @generated-members
}
