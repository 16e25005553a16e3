/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * The synchronized twin of StringBuilder: AbstractStringBuilder's code, under this buffer's
 * monitor wherever it reads or changes the contents as a whole.
 */
public final class StringBuffer extends AbstractStringBuilder
        implements CharSequence, java.io.Serializable {
    private static final long serialVersionUID = 1L;

    public StringBuffer() {
        super(16);
    }

    public StringBuffer(int capacity) {
        super(capacity);
    }

    public StringBuffer(String s) {
        super(s.length() + 16);
        append(s);
    }

    public StringBuffer(CharSequence s) {
        super(s.length() + 16);
        append(s);
    }

    public synchronized int length() {
        return super.length();
    }

    public synchronized char charAt(int index) {
        return super.charAt(index);
    }

    public synchronized StringBuffer append(String s) {
        super.append(s);
        return this;
    }

    public synchronized StringBuffer append(Object o) {
        super.append(o);
        return this;
    }

    public synchronized StringBuffer append(StringBuffer sb) {
        super.append(sb);
        return this;
    }

    public synchronized StringBuffer append(CharSequence s) {
        super.append(s);
        return this;
    }

    public synchronized StringBuffer append(CharSequence s, int start, int end) {
        super.append(s, start, end);
        return this;
    }

    public synchronized StringBuffer append(char[] chars) {
        super.append(chars);
        return this;
    }

    public synchronized StringBuffer append(char[] chars, int offset, int len) {
        super.append(chars, offset, len);
        return this;
    }

    public synchronized StringBuffer append(boolean b) {
        super.append(b);
        return this;
    }

    public synchronized StringBuffer append(char c) {
        super.append(c);
        return this;
    }

    public synchronized StringBuffer append(int i) {
        super.append(i);
        return this;
    }

    public synchronized StringBuffer append(long l) {
        super.append(l);
        return this;
    }

    public synchronized StringBuffer append(float f) {
        super.append(f);
        return this;
    }

    public synchronized StringBuffer append(double d) {
        super.append(d);
        return this;
    }

    public synchronized StringBuffer appendCodePoint(int cp) {
        super.appendCodePoint(cp);
        return this;
    }

    public synchronized StringBuffer insert(int offset, String s) {
        super.insert(offset, s);
        return this;
    }

    public synchronized StringBuffer insert(int offset, char c) {
        super.insert(offset, c);
        return this;
    }

    public synchronized StringBuffer insert(int offset, int i) {
        super.insert(offset, i);
        return this;
    }

    public synchronized StringBuffer deleteCharAt(int index) {
        super.deleteCharAt(index);
        return this;
    }

    public synchronized StringBuffer delete(int start, int end) {
        super.delete(start, end);
        return this;
    }

    public synchronized StringBuffer reverse() {
        super.reverse();
        return this;
    }

    public synchronized String toString() {
        return super.toString();
    }

    // @generated-members
}
