/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.io;

/**
 * Bytes to a file descriptor, through write(2) (writeBytes is a mini-core native:
 * proving/host-vm/native/core_natives.cc).
 */
public class FileOutputStream extends OutputStream {
    private final int fd;

    public FileOutputStream(int fd) {
        this.fd = fd;
    }

    public FileOutputStream(FileDescriptor fd) {
        this.fd = fd.getInt$();
    }

    public void write(int b) throws IOException {
        write(new byte[] { (byte) b }, 0, 1);
    }

    public void write(byte[] b, int off, int len) throws IOException {
        if (off < 0 || len < 0 || off > b.length - len) {
            throw new IndexOutOfBoundsException("off " + off + ", len " + len);
        }
        if (writeBytes(fd, b, off, len) < 0) {
            throw new IOException("write failed on fd " + fd);
        }
    }

    /** Returns the number of bytes written, or -1 (errno set) on failure. */
    private static native int writeBytes(int fd, byte[] b, int off, int len);
}
