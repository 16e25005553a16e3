/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package libcore.util;

/** Shared empty arrays (ART reads STACK_TRACE_ELEMENT for the StackOverflowError it builds). */
public final class EmptyArray {
    private EmptyArray() {
    }

    public static final boolean[] BOOLEAN = new boolean[0];
    public static final byte[] BYTE = new byte[0];
    public static final char[] CHAR = new char[0];
    public static final int[] INT = new int[0];
    public static final long[] LONG = new long[0];
    public static final Object[] OBJECT = new Object[0];
    public static final String[] STRING = new String[0];
    public static final Class<?>[] CLASS = new Class<?>[0];
    public static final Throwable[] THROWABLE = new Throwable[0];
    public static final StackTraceElement[] STACK_TRACE_ELEMENT = new StackTraceElement[0];

    // @generated-members
}
