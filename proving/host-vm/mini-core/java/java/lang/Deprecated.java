/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** The javac annotation of that name (source-level; kept for the sources' sake). */
public @interface Deprecated {

}
