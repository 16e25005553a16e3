/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.annotation.optimization.FastNative;
import java.nio.charset.Charset;

/**
 * Where strings come from: ART rewrites each `new String(...)` into the StringFactory method with
 * the same arguments (well_known_classes.cc STRING_INIT_LIST). The natives are ART's own
 * (runtime/native/java_lang_StringFactory.cc). Byte arrays decode as UTF-8 unless a charset name
 * says ISO-8859-1/US-ASCII or UTF-16: mini-core has no other charsets.
 */
public final class StringFactory {
    private StringFactory() {
    }

    public static String newEmptyString() {
        return newStringFromChars(0, 0, new char[0]);
    }

    public static String newStringFromBytes(byte[] data) {
        return newStringFromUtf8Bytes(data, 0, data.length);
    }

    public static String newStringFromBytes(byte[] data, int high) {
        return newStringFromBytes(data, high, 0, data.length);
    }

    public static String newStringFromBytes(byte[] data, byte coder) {
        return coder == 0 ? newStringFromBytes(data, 0, 0, data.length)
                : newStringFromUtf16Bytes(data, 0, data.length / 2);
    }

    public static String newStringFromBytes(byte[] data, int offset, int byteCount) {
        checkBounds(data.length, offset, byteCount);
        return newStringFromUtf8Bytes(data, offset, byteCount);
    }

    public static String newStringFromBytes(byte[] data, int offset, int byteCount,
            String charsetName) {
        checkBounds(data.length, offset, byteCount);
        String cs = charsetName.toUpperCase();
        if (cs.equals("ISO-8859-1") || cs.equals("LATIN1") || cs.equals("US-ASCII")) {
            return newStringFromBytes(data, 0, offset, byteCount);
        }
        if (cs.equals("UTF-16BE") || cs.equals("UTF-16")) {
            return newStringFromUtf16Bytes(data, offset, byteCount / 2);
        }
        return newStringFromUtf8Bytes(data, offset, byteCount);
    }

    public static String newStringFromBytes(byte[] data, String charsetName) {
        return newStringFromBytes(data, 0, data.length, charsetName);
    }

    public static String newStringFromBytes(byte[] data, int offset, int byteCount,
            Charset charset) {
        checkBounds(data.length, offset, byteCount);
        return newStringFromUtf8Bytes(data, offset, byteCount);
    }

    public static String newStringFromBytes(byte[] data, Charset charset) {
        return newStringFromUtf8Bytes(data, 0, data.length);
    }

    public static String newStringFromChars(char[] data) {
        return newStringFromChars(0, data.length, data);
    }

    public static String newStringFromChars(char[] data, int offset, int charCount) {
        checkBounds(data.length, offset, charCount);
        return newStringFromChars(offset, charCount, data);
    }

    public static String newStringFromCodePoints(int[] codePoints, int offset, int count) {
        checkBounds(codePoints.length, offset, count);
        StringBuilder sb = new StringBuilder(count);
        for (int i = offset; i < offset + count; i++) {
            sb.appendCodePoint(codePoints[i]);
        }
        return sb.toString();
    }

    public static String newStringFromStringBuffer(StringBuffer buffer) {
        synchronized (buffer) {
            return newStringFromChars(0, buffer.length(), buffer.getValue());
        }
    }

    public static String newStringFromStringBuilder(StringBuilder builder) {
        return newStringFromChars(0, builder.length(), builder.getValue());
    }

    private static void checkBounds(int length, int offset, int count) {
        if (offset < 0 || count < 0 || count > length - offset) {
            throw new StringIndexOutOfBoundsException("length=" + length + "; regionStart="
                    + offset + "; regionLength=" + count);
        }
    }

    @FastNative
    public static native String newStringFromBytes(byte[] data, int high, int offset, int byteCount);

    @FastNative
    static native String newStringFromChars(int offset, int charCount, char[] data);

    @FastNative
    public static native String newStringFromString(String toCopy);

    @FastNative
    static native String newStringFromUtf8Bytes(byte[] data, int offset, int byteCount);

    @FastNative
    static native String newStringFromUtf16Bytes(byte[] data, int offset, int charCount);

    // @generated-members
}
