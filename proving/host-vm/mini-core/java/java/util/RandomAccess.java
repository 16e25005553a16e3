/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/** A marker: the list's get(int) is fast (kotlin.collections.EmptyList implements it). */
public interface RandomAccess {
}
