/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/** A boxed boolean. */
public final class Boolean implements java.io.Serializable, Comparable<Boolean> {
    private static final long serialVersionUID = 1L;
    public static final Boolean TRUE = new Boolean(true);
    public static final Boolean FALSE = new Boolean(false);
    @SuppressWarnings("unchecked")
    public static final Class<Boolean> TYPE = (Class<Boolean>) Class.getPrimitiveClass("boolean");

    private final boolean value;

    public Boolean(boolean value) {
        this.value = value;
    }

    public static Boolean valueOf(boolean b) {
        return b ? TRUE : FALSE;
    }

    public static Boolean valueOf(String s) {
        return parseBoolean(s) ? TRUE : FALSE;
    }

    public static boolean parseBoolean(String s) {
        return s != null && s.equalsIgnoreCase("true");
    }

    public boolean booleanValue() {
        return value;
    }

    public int hashCode() {
        return value ? 1231 : 1237;
    }

    public boolean equals(Object o) {
        return o instanceof Boolean && ((Boolean) o).value == value;
    }

    public int compareTo(Boolean other) {
        return compare(value, other.value);
    }

    public static int compare(boolean a, boolean b) {
        return a == b ? 0 : (a ? 1 : -1);
    }

    public String toString() {
        return value ? "true" : "false";
    }

    public static String toString(boolean b) {
        return b ? "true" : "false";
    }

    // @generated-members
}
