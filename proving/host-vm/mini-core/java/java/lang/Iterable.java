/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import java.util.Iterator;

/** What the enhanced for statement iterates over. */
public interface Iterable<T> {
    Iterator<T> iterator();
}
