/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/** An ordering. */
public interface Comparator<T> {
    int compare(T a, T b);
}
