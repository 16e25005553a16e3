/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * A boxed char, with the character classification mini-core needs. Case mapping and the
 * classifications are ASCII/Latin-1 only (no Unicode tables here).
 */
public final class Character implements java.io.Serializable, Comparable<Character> {
    private static final long serialVersionUID = 1L;
    public static final char MIN_VALUE = '\u0000';
    public static final char MAX_VALUE = '\uffff';
    public static final int MIN_RADIX = 2;
    public static final int MAX_RADIX = 36;
    public static final char MIN_HIGH_SURROGATE = '\ud800';
    public static final char MAX_HIGH_SURROGATE = '\udbff';
    public static final char MIN_LOW_SURROGATE = '\udc00';
    public static final char MAX_LOW_SURROGATE = '\udfff';
    public static final int MIN_SUPPLEMENTARY_CODE_POINT = 0x10000;
    @SuppressWarnings("unchecked")
    public static final Class<Character> TYPE = (Class<Character>) Class.getPrimitiveClass("char");

    private static final Character[] ASCII = new Character[128];

    private final char value;

    public Character(char value) {
        this.value = value;
    }

    public static Character valueOf(char c) {
        if (c < 128) {
            Character v = ASCII[c];
            if (v == null) {
                v = new Character(c);
                ASCII[c] = v;
            }
            return v;
        }
        return new Character(c);
    }

    public char charValue() {
        return value;
    }

    public int hashCode() {
        return value;
    }

    public boolean equals(Object o) {
        return o instanceof Character && ((Character) o).value == value;
    }

    public int compareTo(Character other) {
        return value - other.value;
    }

    public static int compare(char a, char b) {
        return a - b;
    }

    public String toString() {
        return String.valueOf(value);
    }

    public static String toString(char c) {
        return String.valueOf(c);
    }

    public static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    public static boolean isLetter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                || (c >= '\u00c0' && c <= '\u00ff' && c != '\u00d7' && c != '\u00f7');
    }

    public static boolean isLetterOrDigit(char c) {
        return isLetter(c) || isDigit(c);
    }

    public static boolean isWhitespace(char c) {
        return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\u001c' && c <= '\u001f');
    }

    public static boolean isSpaceChar(char c) {
        return c == ' ' || c == '\u00a0';
    }

    public static boolean isUpperCase(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '\u00c0' && c <= '\u00de' && c != '\u00d7');
    }

    public static boolean isLowerCase(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '\u00df' && c <= '\u00ff' && c != '\u00f7');
    }

    public static char toLowerCase(char c) {
        if ((c >= 'A' && c <= 'Z') || (c >= '\u00c0' && c <= '\u00de' && c != '\u00d7')) {
            return (char) (c + 32);
        }
        return c;
    }

    public static char toUpperCase(char c) {
        if ((c >= 'a' && c <= 'z') || (c >= '\u00e0' && c <= '\u00fe' && c != '\u00f7')) {
            return (char) (c - 32);
        }
        return c;
    }

    public static int digit(char c, int radix) {
        int d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if (c >= 'a' && c <= 'z') {
            d = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'Z') {
            d = c - 'A' + 10;
        } else {
            return -1;
        }
        return d < radix ? d : -1;
    }

    public static char forDigit(int digit, int radix) {
        if (digit < 0 || digit >= radix || radix < MIN_RADIX || radix > MAX_RADIX) {
            return 0;
        }
        return (char) (digit < 10 ? '0' + digit : 'a' + digit - 10);
    }

    public static boolean isHighSurrogate(char c) {
        return c >= MIN_HIGH_SURROGATE && c <= MAX_HIGH_SURROGATE;
    }

    public static boolean isLowSurrogate(char c) {
        return c >= MIN_LOW_SURROGATE && c <= MAX_LOW_SURROGATE;
    }

    public static boolean isSurrogate(char c) {
        return c >= MIN_HIGH_SURROGATE && c <= MAX_LOW_SURROGATE;
    }

    public static int toCodePoint(char high, char low) {
        return ((high - MIN_HIGH_SURROGATE) << 10) + (low - MIN_LOW_SURROGATE) + 0x10000;
    }

    public static char highSurrogate(int cp) {
        return (char) ((cp >>> 10) + (MIN_HIGH_SURROGATE - (0x10000 >>> 10)));
    }

    public static char lowSurrogate(int cp) {
        return (char) ((cp & 0x3ff) + MIN_LOW_SURROGATE);
    }

    public static int charCount(int cp) {
        return cp >= 0x10000 ? 2 : 1;
    }

    public static char[] toChars(int cp) {
        if (cp >= 0x10000) {
            return new char[] { highSurrogate(cp), lowSurrogate(cp) };
        }
        return new char[] { (char) cp };
    }

    // @generated-members
}
