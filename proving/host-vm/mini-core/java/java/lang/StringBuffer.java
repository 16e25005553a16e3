/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * The synchronized twin of StringBuilder.
 * The append/length/toString methods are ART intrinsics (intrinsics_list.h), so they are public,
 * non-static methods of this class itself.
 */
public final class StringBuffer implements CharSequence, java.io.Serializable {
    private static final long serialVersionUID = 1L;

    private char[] value;
    private int count;

    public StringBuffer() {
        value = new char[16];
    }

    public StringBuffer(int capacity) {
        value = new char[capacity];
    }

    public StringBuffer(String s) {
        value = new char[s.length() + 16];
        append(s);
    }

    public StringBuffer(CharSequence s) {
        value = new char[s.length() + 16];
        append(s);
    }

    char[] getValue() {
        return value;
    }

    private void ensure(int extra) {
        int need = count + extra;
        if (need > value.length) {
            int n = value.length * 2 + 2;
            if (n < need) {
                n = need;
            }
            char[] v = new char[n];
            System.arraycopy(value, 0, v, 0, count);
            value = v;
        }
    }

    public synchronized int length() {
        return count;
    }

    public int capacity() {
        return value.length;
    }

    public synchronized char charAt(int index) {
        if (index < 0 || index >= count) {
            throw new StringIndexOutOfBoundsException("index " + index + ", length " + count);
        }
        return value[index];
    }

    public void setCharAt(int index, char c) {
        if (index < 0 || index >= count) {
            throw new StringIndexOutOfBoundsException("index " + index + ", length " + count);
        }
        value[index] = c;
    }

    public void setLength(int n) {
        if (n < 0) {
            throw new StringIndexOutOfBoundsException("length " + n);
        }
        ensure(n - count);
        for (int i = count; i < n; i++) {
            value[i] = 0;
        }
        count = n;
    }

    public CharSequence subSequence(int start, int end) {
        return substring(start, end);
    }

    public String substring(int start) {
        return substring(start, count);
    }

    public String substring(int start, int end) {
        if (start < 0 || end > count || start > end) {
            throw new StringIndexOutOfBoundsException("start " + start + ", end " + end
                    + ", length " + count);
        }
        return new String(value, start, end - start);
    }

    public synchronized StringBuffer append(String s) {
        if (s == null) {
            s = "null";
        }
        int n = s.length();
        ensure(n);
        s.getCharsNoCheck(0, n, value, count);
        count += n;
        return this;
    }

    public synchronized StringBuffer append(Object o) {
        return append(String.valueOf(o));
    }

    public synchronized StringBuffer append(StringBuffer sb) {
        return append(sb == null ? "null" : sb.toString());
    }

    public synchronized StringBuffer append(CharSequence s) {
        if (s == null) {
            return append("null");
        }
        return append(s, 0, s.length());
    }

    public synchronized StringBuffer append(CharSequence s, int start, int end) {
        if (s == null) {
            s = "null";
        }
        if (start < 0 || end > s.length() || start > end) {
            throw new IndexOutOfBoundsException("start " + start + ", end " + end);
        }
        ensure(end - start);
        for (int i = start; i < end; i++) {
            value[count++] = s.charAt(i);
        }
        return this;
    }

    public synchronized StringBuffer append(char[] chars) {
        return append(chars, 0, chars.length);
    }

    public synchronized StringBuffer append(char[] chars, int offset, int len) {
        ensure(len);
        System.arraycopy(chars, offset, value, count, len);
        count += len;
        return this;
    }

    public synchronized StringBuffer append(boolean b) {
        return append(b ? "true" : "false");
    }

    public synchronized StringBuffer append(char c) {
        ensure(1);
        value[count++] = c;
        return this;
    }

    public synchronized StringBuffer append(int i) {
        return append(Integer.toString(i));
    }

    public synchronized StringBuffer append(long l) {
        return append(Long.toString(l));
    }

    public synchronized StringBuffer append(float f) {
        return append(Float.toString(f));
    }

    public synchronized StringBuffer append(double d) {
        return append(Double.toString(d));
    }

    public synchronized StringBuffer appendCodePoint(int cp) {
        if (cp >= 0x10000) {
            append(Character.highSurrogate(cp));
            return append(Character.lowSurrogate(cp));
        }
        return append((char) cp);
    }

    public synchronized StringBuffer insert(int offset, String s) {
        if (offset < 0 || offset > count) {
            throw new StringIndexOutOfBoundsException("offset " + offset + ", length " + count);
        }
        if (s == null) {
            s = "null";
        }
        int n = s.length();
        ensure(n);
        System.arraycopy(value, offset, value, offset + n, count - offset);
        s.getCharsNoCheck(0, n, value, offset);
        count += n;
        return this;
    }

    public synchronized StringBuffer insert(int offset, char c) {
        return insert(offset, String.valueOf(c));
    }

    public synchronized StringBuffer insert(int offset, int i) {
        return insert(offset, Integer.toString(i));
    }

    public synchronized StringBuffer deleteCharAt(int index) {
        if (index < 0 || index >= count) {
            throw new StringIndexOutOfBoundsException("index " + index + ", length " + count);
        }
        System.arraycopy(value, index + 1, value, index, count - index - 1);
        count--;
        return this;
    }

    public synchronized StringBuffer delete(int start, int end) {
        if (end > count) {
            end = count;
        }
        if (start < 0 || start > end) {
            throw new StringIndexOutOfBoundsException("start " + start + ", end " + end);
        }
        System.arraycopy(value, end, value, start, count - end);
        count -= end - start;
        return this;
    }

    public synchronized StringBuffer reverse() {
        for (int i = 0, j = count - 1; i < j; i++, j--) {
            char t = value[i];
            value[i] = value[j];
            value[j] = t;
        }
        return this;
    }

    public int indexOf(String s) {
        return toString().indexOf(s);
    }

    public synchronized String toString() {
        return new String(value, 0, count);
    }

    // @generated-members
}
