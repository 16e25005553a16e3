/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/** A cursor over a collection. */
public interface Iterator<E> {
    boolean hasNext();

    E next();

    void remove();
}
