/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.io;

/** Text (UTF-8) to an OutputStream; print never throws, checkError reports failures. */
public class PrintStream extends OutputStream {
    private final OutputStream out;
    private final boolean autoFlush;
    private boolean error;

    public PrintStream(OutputStream out) {
        this(out, false);
    }

    public PrintStream(OutputStream out, boolean autoFlush) {
        this.out = out;
        this.autoFlush = autoFlush;
    }

    private synchronized void emit(String s) {
        try {
            byte[] b = s.getBytes();
            out.write(b, 0, b.length);
            if (autoFlush) {
                out.flush();
            }
        } catch (IOException e) {
            error = true;
        }
    }

    public void write(int b) {
        try {
            out.write(b);
        } catch (IOException e) {
            error = true;
        }
    }

    public void write(byte[] b, int off, int len) {
        try {
            out.write(b, off, len);
        } catch (IOException e) {
            error = true;
        }
    }

    public void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            error = true;
        }
    }

    public void close() {
        try {
            out.close();
        } catch (IOException e) {
            error = true;
        }
    }

    public boolean checkError() {
        return error;
    }

    public void print(String s) {
        emit(s == null ? "null" : s);
    }

    public void print(Object o) {
        emit(String.valueOf(o));
    }

    public void print(char[] s) {
        emit(new String(s));
    }

    public void print(char c) {
        emit(String.valueOf(c));
    }

    public void print(boolean b) {
        emit(String.valueOf(b));
    }

    public void print(int i) {
        emit(String.valueOf(i));
    }

    public void print(long l) {
        emit(String.valueOf(l));
    }

    public void print(float f) {
        emit(String.valueOf(f));
    }

    public void print(double d) {
        emit(String.valueOf(d));
    }

    public void println() {
        emit("\n");
    }

    public void println(String s) {
        emit((s == null ? "null" : s) + "\n");
    }

    public void println(Object o) {
        emit(String.valueOf(o) + "\n");
    }

    public void println(char[] s) {
        emit(new String(s) + "\n");
    }

    public void println(char c) {
        emit(String.valueOf(c) + "\n");
    }

    public void println(boolean b) {
        emit(String.valueOf(b) + "\n");
    }

    public void println(int i) {
        emit(String.valueOf(i) + "\n");
    }

    public void println(long l) {
        emit(String.valueOf(l) + "\n");
    }

    public void println(float f) {
        emit(String.valueOf(f) + "\n");
    }

    public void println(double d) {
        emit(String.valueOf(d) + "\n");
    }

    public PrintStream printf(String format, Object... args) {
        emit(String.format(format, args));
        return this;
    }

    public PrintStream append(CharSequence s) {
        emit(String.valueOf(s));
        return this;
    }
}
