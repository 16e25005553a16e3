/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.function;

/** An operation on one value (ART reports hidden-API use to one). */
public interface Consumer<T> {
    void accept(T t);
}
