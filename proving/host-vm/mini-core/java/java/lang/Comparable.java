/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** A total order on the implementing class's instances. */
public interface Comparable<T> {
    int compareTo(T other);
}
