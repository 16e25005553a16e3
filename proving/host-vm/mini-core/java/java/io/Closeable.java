/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.io;

/** Something that holds a resource until closed. */
public interface Closeable {
    void close() throws IOException;
}
