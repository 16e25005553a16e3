/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.io;

/** Marker interface; ART gives every array class Cloneable and Serializable. */
public interface Serializable {
}
