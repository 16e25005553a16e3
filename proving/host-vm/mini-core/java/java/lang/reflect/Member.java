/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.reflect;

/** A field, method or constructor. */
public interface Member {
    Class<?> getDeclaringClass();

    String getName();

    int getModifiers();
}
