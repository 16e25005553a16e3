/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.annotation.optimization.FastNative;
import java.util.Comparator;

/**
 * An immutable sequence of UTF-16 code units, stored inline the way mirror::String lays it out:
 * `count` is (length << 1) | (compressed ? 0 : 1), the chars (8-bit when compressed) follow the
 * object header. Only ART makes strings: every `new String(...)` is replaced by the matching
 * StringFactory method (well_known_classes.cc STRING_INIT_LIST), so the constructors below are
 * never run. ART allocates the class pre-sized (mirror::String::ClassSize): gen.py pads the vtable
 * to the length it assumes and checks the static fields (three 8-bit, one 64-bit, two references).
 */
public final class String implements java.io.Serializable, Comparable<String>, CharSequence {
    private static final long serialVersionUID = 0x6d696e69537472L;

    static final boolean COMPACT_STRINGS = true;
    private static final byte LATIN1 = 0;
    private static final byte UTF16 = 1;

    public static final Comparator<String> CASE_INSENSITIVE_ORDER = new CaseInsensitiveOrder();
    private static final String[] NO_STRINGS = new String[0];

    private final int count;
    private int hash;

    static final class CaseInsensitiveOrder implements Comparator<String> {
        public int compare(String a, String b) {
            return a.compareToIgnoreCase(b);
        }
    }

    // The constructors exist for javac and for ART's String.<init> -> StringFactory table.
    private static UnsupportedOperationException factoryOnly() {
        return new UnsupportedOperationException("ART replaces String constructors by StringFactory");
    }

    public String() {
        count = 0;
        throw factoryOnly();
    }

    public String(String original) {
        count = 0;
        throw factoryOnly();
    }

    public String(char[] value) {
        count = 0;
        throw factoryOnly();
    }

    public String(char[] value, int offset, int length) {
        count = 0;
        throw factoryOnly();
    }

    String(int offset, int length, char[] value) {
        count = 0;
        throw factoryOnly();
    }

    public String(int[] codePoints, int offset, int length) {
        count = 0;
        throw factoryOnly();
    }

    public String(byte[] bytes) {
        count = 0;
        throw factoryOnly();
    }

    public String(byte[] ascii, int hibyte) {
        count = 0;
        throw factoryOnly();
    }

    String(byte[] bytes, byte coder) {
        count = 0;
        throw factoryOnly();
    }

    public String(byte[] bytes, int offset, int length) {
        count = 0;
        throw factoryOnly();
    }

    public String(byte[] ascii, int hibyte, int offset, int length) {
        count = 0;
        throw factoryOnly();
    }

    public String(byte[] bytes, int offset, int length, String charsetName) {
        count = 0;
        throw factoryOnly();
    }

    public String(byte[] bytes, String charsetName) {
        count = 0;
        throw factoryOnly();
    }

    public String(byte[] bytes, int offset, int length, java.nio.charset.Charset charset) {
        count = 0;
        throw factoryOnly();
    }

    public String(byte[] bytes, java.nio.charset.Charset charset) {
        count = 0;
        throw factoryOnly();
    }

    public String(StringBuffer buffer) {
        count = 0;
        throw factoryOnly();
    }

    public String(StringBuilder builder) {
        count = 0;
        throw factoryOnly();
    }

    public int length() {
        return count >>> 1;
    }

    public boolean isEmpty() {
        return (count >>> 1) == 0;
    }

    @FastNative
    public native char charAt(int index);

    @FastNative
    public native int compareTo(String other);

    @FastNative
    public native String concat(String other);

    @FastNative
    public native String intern();

    @FastNative
    public native char[] toCharArray();

    @FastNative
    native void getCharsNoCheck(int start, int end, char[] buffer, int index);

    @FastNative
    private native String fastSubstring(int start, int length);

    @FastNative
    private native String doReplace(char oldChar, char newChar);

    @FastNative
    private native String doRepeat(int count);

    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof String)) {
            return false;
        }
        String s = (String) other;
        int n = length();
        if (n != s.length()) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (charAt(i) != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    public int hashCode() {
        int h = hash;
        if (h == 0) {
            int n = length();
            for (int i = 0; i < n; i++) {
                h = 31 * h + charAt(i);
            }
            hash = h;
        }
        return h;
    }

    public String toString() {
        return this;
    }

    public CharSequence subSequence(int start, int end) {
        return substring(start, end);
    }

    public String substring(int start) {
        return substring(start, length());
    }

    public String substring(int start, int end) {
        int n = length();
        if (start < 0 || end > n || start > end) {
            throw new StringIndexOutOfBoundsException("begin " + start + ", end " + end
                    + ", length " + n);
        }
        if (start == 0 && end == n) {
            return this;
        }
        return fastSubstring(start, end - start);
    }

    public void getChars(int start, int end, char[] buffer, int index) {
        if (start < 0 || end > length() || start > end) {
            throw new StringIndexOutOfBoundsException("begin " + start + ", end " + end
                    + ", length " + length());
        }
        if (index < 0 || index + (end - start) > buffer.length) {
            throw new ArrayIndexOutOfBoundsException("index " + index + ", count " + (end - start)
                    + ", length " + buffer.length);
        }
        getCharsNoCheck(start, end, buffer, index);
    }

    public int indexOf(int ch) {
        return indexOf(ch, 0);
    }

    public int indexOf(int ch, int from) {
        int n = length();
        if (from < 0) {
            from = 0;
        }
        if (ch >= 0x10000) {
            return indexOf(new String(Character.toChars(ch)), from);
        }
        for (int i = from; i < n; i++) {
            if (charAt(i) == ch) {
                return i;
            }
        }
        return -1;
    }

    public int indexOf(String s) {
        return indexOf(s, 0);
    }

    public int indexOf(String s, int from) {
        int n = length();
        int m = s.length();
        if (from < 0) {
            from = 0;
        }
        for (int i = from; i + m <= n; i++) {
            if (regionMatches(i, s, 0, m)) {
                return i;
            }
        }
        return (m == 0 && from >= n) ? n : -1;
    }

    public int lastIndexOf(int ch) {
        return lastIndexOf(ch, length() - 1);
    }

    public int lastIndexOf(int ch, int from) {
        if (from >= length()) {
            from = length() - 1;
        }
        for (int i = from; i >= 0; i--) {
            if (charAt(i) == ch) {
                return i;
            }
        }
        return -1;
    }

    public int lastIndexOf(String s) {
        int n = length();
        int m = s.length();
        for (int i = n - m; i >= 0; i--) {
            if (regionMatches(i, s, 0, m)) {
                return i;
            }
        }
        return -1;
    }

    public boolean contains(CharSequence s) {
        return indexOf(s.toString()) >= 0;
    }

    public boolean regionMatches(int offset, String other, int otherOffset, int len) {
        return regionMatches(false, offset, other, otherOffset, len);
    }

    public boolean regionMatches(boolean ignoreCase, int offset, String other, int otherOffset,
            int len) {
        if (offset < 0 || otherOffset < 0 || offset + len > length()
                || otherOffset + len > other.length()) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            char a = charAt(offset + i);
            char b = other.charAt(otherOffset + i);
            if (a != b && !(ignoreCase && Character.toLowerCase(a) == Character.toLowerCase(b))) {
                return false;
            }
        }
        return true;
    }

    public boolean startsWith(String prefix) {
        return regionMatches(0, prefix, 0, prefix.length());
    }

    public boolean startsWith(String prefix, int offset) {
        return regionMatches(offset, prefix, 0, prefix.length());
    }

    public boolean endsWith(String suffix) {
        return regionMatches(length() - suffix.length(), suffix, 0, suffix.length());
    }

    public boolean equalsIgnoreCase(String other) {
        return other != null && other.length() == length()
                && regionMatches(true, 0, other, 0, length());
    }

    public int compareToIgnoreCase(String other) {
        int n = Math.min(length(), other.length());
        for (int i = 0; i < n; i++) {
            char a = Character.toLowerCase(charAt(i));
            char b = Character.toLowerCase(other.charAt(i));
            if (a != b) {
                return a - b;
            }
        }
        return length() - other.length();
    }

    public boolean contentEquals(CharSequence cs) {
        if (cs.length() != length()) {
            return false;
        }
        for (int i = 0; i < length(); i++) {
            if (cs.charAt(i) != charAt(i)) {
                return false;
            }
        }
        return true;
    }

    public String replace(char oldChar, char newChar) {
        if (oldChar == newChar || indexOf(oldChar) < 0) {
            return this;
        }
        return doReplace(oldChar, newChar);
    }

    public String replace(CharSequence target, CharSequence replacement) {
        String t = target.toString();
        String r = replacement.toString();
        StringBuilder sb = new StringBuilder();
        int from = 0;
        if (t.isEmpty()) {
            for (int i = 0; i < length(); i++) {
                sb.append(r).append(charAt(i));
            }
            return sb.append(r).toString();
        }
        int at;
        while ((at = indexOf(t, from)) >= 0) {
            sb.append(this, from, at).append(r);
            from = at + t.length();
        }
        return from == 0 ? this : sb.append(this, from, length()).toString();
    }

    public String repeat(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("count is negative: " + n);
        }
        if (n == 1) {
            return this;
        }
        return doRepeat(n);
    }

    public String trim() {
        int start = 0;
        int end = length();
        while (start < end && charAt(start) <= ' ') {
            start++;
        }
        while (end > start && charAt(end - 1) <= ' ') {
            end--;
        }
        return substring(start, end);
    }

    public String strip() {
        int start = 0;
        int end = length();
        while (start < end && Character.isWhitespace(charAt(start))) {
            start++;
        }
        while (end > start && Character.isWhitespace(charAt(end - 1))) {
            end--;
        }
        return substring(start, end);
    }

    public boolean isBlank() {
        return strip().isEmpty();
    }

    public String toLowerCase() {
        char[] c = toCharArray();
        for (int i = 0; i < c.length; i++) {
            c[i] = Character.toLowerCase(c[i]);
        }
        return new String(c);
    }

    public String toUpperCase() {
        char[] c = toCharArray();
        for (int i = 0; i < c.length; i++) {
            c[i] = Character.toUpperCase(c[i]);
        }
        return new String(c);
    }

    public String[] split(String separator) {
        if (isEmpty()) {
            return new String[] { this };
        }
        java.util.ArrayList<String> parts = new java.util.ArrayList<String>();
        int from = 0;
        int at;
        while (!separator.isEmpty() && (at = indexOf(separator, from)) >= 0) {
            parts.add(substring(from, at));
            from = at + separator.length();
        }
        parts.add(substring(from));
        int n = parts.size();
        while (n > 0 && parts.get(n - 1).isEmpty()) {
            n--;
        }
        String[] out = n == 0 ? NO_STRINGS : new String[n];
        for (int i = 0; i < n; i++) {
            out[i] = parts.get(i);
        }
        return out;
    }

    public int codePointAt(int index) {
        char c = charAt(index);
        if (Character.isHighSurrogate(c) && index + 1 < length()) {
            char d = charAt(index + 1);
            if (Character.isLowSurrogate(d)) {
                return Character.toCodePoint(c, d);
            }
        }
        return c;
    }

    /** The UTF-8 encoding (the only charset mini-core knows). */
    public byte[] getBytes() {
        int n = length();
        int size = 0;
        for (int i = 0; i < n; i++) {
            int cp = codePointAt(i);
            if (cp >= 0x10000) {
                i++;
            }
            size += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        }
        byte[] out = new byte[size];
        int k = 0;
        for (int i = 0; i < n; i++) {
            int cp = codePointAt(i);
            if (cp >= 0x10000) {
                i++;
            }
            if (cp < 0x80) {
                out[k++] = (byte) cp;
            } else if (cp < 0x800) {
                out[k++] = (byte) (0xc0 | (cp >> 6));
                out[k++] = (byte) (0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                out[k++] = (byte) (0xe0 | (cp >> 12));
                out[k++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                out[k++] = (byte) (0x80 | (cp & 0x3f));
            } else {
                out[k++] = (byte) (0xf0 | (cp >> 18));
                out[k++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
                out[k++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                out[k++] = (byte) (0x80 | (cp & 0x3f));
            }
        }
        return out;
    }

    public static String valueOf(Object o) {
        return o == null ? "null" : o.toString();
    }

    public static String valueOf(char[] data) {
        return new String(data);
    }

    public static String valueOf(boolean b) {
        return b ? "true" : "false";
    }

    public static String valueOf(char c) {
        return new String(new char[] { c });
    }

    public static String valueOf(int i) {
        return Integer.toString(i);
    }

    public static String valueOf(long l) {
        return Long.toString(l);
    }

    public static String valueOf(float f) {
        return Float.toString(f);
    }

    public static String valueOf(double d) {
        return Double.toString(d);
    }

    public static String copyValueOf(char[] data) {
        return new String(data);
    }

    public static String join(CharSequence separator, CharSequence... parts) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                sb.append(separator);
            }
            sb.append(parts[i]);
        }
        return sb.toString();
    }

    /**
     * A small subset of java.util.Formatter: %s %d %x %X %c %b %f (via Double.toString), %n, %%,
     * with an optional '-' or '0' flag and a width.
     */
    public static String format(String format, Object... args) {
        StringBuilder sb = new StringBuilder();
        int arg = 0;
        int n = format.length();
        for (int i = 0; i < n; i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 >= n) {
                sb.append(c);
                continue;
            }
            i++;
            boolean left = false;
            boolean zero = false;
            if (format.charAt(i) == '-') {
                left = true;
                i++;
            } else if (format.charAt(i) == '0') {
                zero = true;
                i++;
            }
            int width = 0;
            while (i < n && Character.isDigit(format.charAt(i))) {
                width = width * 10 + (format.charAt(i++) - '0');
            }
            if (i >= n) {
                throw new IllegalArgumentException("Bad format: " + format);
            }
            char conv = format.charAt(i);
            String s;
            switch (conv) {
                case '%':
                    s = "%";
                    break;
                case 'n':
                    s = "\n";
                    break;
                case 's':
                case 'S':
                    s = String.valueOf(args[arg++]);
                    if (conv == 'S') {
                        s = s.toUpperCase();
                    }
                    break;
                case 'd':
                    s = String.valueOf(args[arg++]);
                    break;
                case 'x':
                case 'X': {
                    Object v = args[arg++];
                    s = v instanceof Long ? Long.toHexString(((Long) v).longValue())
                            : Integer.toHexString(((Number) v).intValue());
                    if (conv == 'X') {
                        s = s.toUpperCase();
                    }
                    break;
                }
                case 'c':
                    s = String.valueOf(args[arg++]);
                    break;
                case 'b':
                    s = String.valueOf(args[arg] != null && !Boolean.FALSE.equals(args[arg]));
                    arg++;
                    break;
                case 'f':
                    s = Double.toString(((Number) args[arg++]).doubleValue());
                    break;
                default:
                    throw new IllegalArgumentException("Unsupported conversion %" + conv);
            }
            if (s.length() < width) {
                StringBuilder pad = new StringBuilder();
                for (int k = s.length(); k < width; k++) {
                    pad.append(zero && !left ? '0' : ' ');
                }
                if (left) {
                    s = s + pad;
                } else if (zero && s.startsWith("-")) {
                    s = "-" + pad + s.substring(1);
                } else {
                    s = pad + s;
                }
            }
            sb.append(s);
        }
        return sb.toString();
    }

    // @generated-members
}
