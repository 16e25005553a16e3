/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * A growable char buffer; javac compiles string concatenation (target 8) into its append chains.
 * The code is AbstractStringBuilder's. The append/length/toString methods are ART intrinsics
 * (intrinsics_list.h), so they are public, non-static methods of this class itself.
 */
public final class StringBuilder extends AbstractStringBuilder
        implements CharSequence, java.io.Serializable {
    private static final long serialVersionUID = 1L;

    public StringBuilder() {
        super(16);
    }

    public StringBuilder(int capacity) {
        super(capacity);
    }

    public StringBuilder(String s) {
        super(s.length() + 16);
        append(s);
    }

    public StringBuilder(CharSequence s) {
        super(s.length() + 16);
        append(s);
    }

    public int length() {
        return super.length();
    }

    public StringBuilder append(String s) {
        super.append(s);
        return this;
    }

    public StringBuilder append(Object o) {
        super.append(o);
        return this;
    }

    public StringBuilder append(StringBuffer sb) {
        super.append(sb);
        return this;
    }

    public StringBuilder append(CharSequence s) {
        super.append(s);
        return this;
    }

    public StringBuilder append(CharSequence s, int start, int end) {
        super.append(s, start, end);
        return this;
    }

    public StringBuilder append(char[] chars) {
        super.append(chars);
        return this;
    }

    public StringBuilder append(char[] chars, int offset, int len) {
        super.append(chars, offset, len);
        return this;
    }

    public StringBuilder append(boolean b) {
        super.append(b);
        return this;
    }

    public StringBuilder append(char c) {
        super.append(c);
        return this;
    }

    public StringBuilder append(int i) {
        super.append(i);
        return this;
    }

    public StringBuilder append(long l) {
        super.append(l);
        return this;
    }

    public StringBuilder append(float f) {
        super.append(f);
        return this;
    }

    public StringBuilder append(double d) {
        super.append(d);
        return this;
    }

    public StringBuilder appendCodePoint(int cp) {
        super.appendCodePoint(cp);
        return this;
    }

    public StringBuilder insert(int offset, String s) {
        super.insert(offset, s);
        return this;
    }

    public StringBuilder insert(int offset, char c) {
        super.insert(offset, c);
        return this;
    }

    public StringBuilder insert(int offset, int i) {
        super.insert(offset, i);
        return this;
    }

    public StringBuilder deleteCharAt(int index) {
        super.deleteCharAt(index);
        return this;
    }

    public StringBuilder delete(int start, int end) {
        super.delete(start, end);
        return this;
    }

    public StringBuilder reverse() {
        super.reverse();
        return this;
    }

    public String toString() {
        return super.toString();
    }

    // @generated-members
}
