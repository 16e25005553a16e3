/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * The growable char buffer of StringBuilder and StringBuffer, written once (as the JDK's
 * AbstractStringBuilder). Each subclass declares again, with itself as the return type, what
 * returns the buffer (and what ART names as an intrinsic, intrinsics_list.h: a method of that
 * class itself); StringBuffer's are synchronized.
 */
abstract class AbstractStringBuilder implements CharSequence {
    private char[] value;
    private int count;

    AbstractStringBuilder(int capacity) {
        value = new char[capacity];
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

    public int length() {
        return count;
    }

    public int capacity() {
        return value.length;
    }

    public char charAt(int index) {
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

    public AbstractStringBuilder append(String s) {
        if (s == null) {
            s = "null";
        }
        int n = s.length();
        ensure(n);
        s.getCharsNoCheck(0, n, value, count);
        count += n;
        return this;
    }

    public AbstractStringBuilder append(Object o) {
        return append(String.valueOf(o));
    }

    public AbstractStringBuilder append(StringBuffer sb) {
        return append(sb == null ? "null" : sb.toString());
    }

    public AbstractStringBuilder append(CharSequence s) {
        if (s == null) {
            return append("null");
        }
        return append(s, 0, s.length());
    }

    public AbstractStringBuilder append(CharSequence s, int start, int end) {
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

    public AbstractStringBuilder append(char[] chars) {
        return append(chars, 0, chars.length);
    }

    public AbstractStringBuilder append(char[] chars, int offset, int len) {
        ensure(len);
        System.arraycopy(chars, offset, value, count, len);
        count += len;
        return this;
    }

    public AbstractStringBuilder append(boolean b) {
        return append(b ? "true" : "false");
    }

    public AbstractStringBuilder append(char c) {
        ensure(1);
        value[count++] = c;
        return this;
    }

    public AbstractStringBuilder append(int i) {
        return append(Integer.toString(i));
    }

    public AbstractStringBuilder append(long l) {
        return append(Long.toString(l));
    }

    public AbstractStringBuilder append(float f) {
        return append(Float.toString(f));
    }

    public AbstractStringBuilder append(double d) {
        return append(Double.toString(d));
    }

    public AbstractStringBuilder appendCodePoint(int cp) {
        if (cp >= 0x10000) {
            append(Character.highSurrogate(cp));
            return append(Character.lowSurrogate(cp));
        }
        return append((char) cp);
    }

    public AbstractStringBuilder insert(int offset, String s) {
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

    public AbstractStringBuilder insert(int offset, char c) {
        return insert(offset, String.valueOf(c));
    }

    public AbstractStringBuilder insert(int offset, int i) {
        return insert(offset, Integer.toString(i));
    }

    public AbstractStringBuilder deleteCharAt(int index) {
        if (index < 0 || index >= count) {
            throw new StringIndexOutOfBoundsException("index " + index + ", length " + count);
        }
        System.arraycopy(value, index + 1, value, index, count - index - 1);
        count--;
        return this;
    }

    public AbstractStringBuilder delete(int start, int end) {
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

    public AbstractStringBuilder reverse() {
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

    public String toString() {
        return new String(value, 0, count);
    }
}
