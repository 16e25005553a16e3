/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** Marker: Object.clone() copies instances of classes that implement it (and all arrays). */
public interface Cloneable {
}
