/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.annotation.optimization.FastNative;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import libcore.util.EmptyArray;

/**
 * The superclass of everything thrown. Its five instance fields are mirror::Throwable's
 * (class_linker_test.cc ThrowableOffsets); ART reads and writes them directly, e.g. when it builds
 * a StackOverflowError without running a constructor (common_throws.cc). `backtrace` holds ART's
 * internal stack trace until someone asks for the StackTraceElements.
 */
public class Throwable implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    private transient volatile Object backtrace;
    private Throwable cause = this;
    private String detailMessage;
    private StackTraceElement[] stackTrace = EmptyArray.STACK_TRACE_ELEMENT;
    private List<Throwable> suppressedExceptions = Collections.emptyList();

    public Throwable() {
        fillInStackTrace();
    }

    public Throwable(String message) {
        fillInStackTrace();
        detailMessage = message;
    }

    public Throwable(String message, Throwable cause) {
        fillInStackTrace();
        detailMessage = message;
        this.cause = cause;
    }

    public Throwable(Throwable cause) {
        fillInStackTrace();
        detailMessage = cause == null ? null : cause.toString();
        this.cause = cause;
    }

    protected Throwable(String message, Throwable cause, boolean enableSuppression,
            boolean writableStackTrace) {
        if (writableStackTrace) {
            fillInStackTrace();
        } else {
            stackTrace = null;
        }
        detailMessage = message;
        this.cause = cause;
        if (!enableSuppression) {
            suppressedExceptions = null;
        }
    }

    public String getMessage() {
        return detailMessage;
    }

    public String getLocalizedMessage() {
        return getMessage();
    }

    public synchronized Throwable getCause() {
        return cause == this ? null : cause;
    }

    public synchronized Throwable initCause(Throwable cause) {
        if (this.cause != this) {
            throw new IllegalStateException("Can't overwrite cause with " + cause, this);
        }
        if (cause == this) {
            throw new IllegalArgumentException("Self-causation not permitted", this);
        }
        this.cause = cause;
        return this;
    }

    public String toString() {
        String message = getLocalizedMessage();
        String name = getClass().getName();
        return message == null ? name : name + ": " + message;
    }

    public synchronized Throwable fillInStackTrace() {
        if (stackTrace != null || backtrace != null) {
            backtrace = nativeFillInStackTrace();
            stackTrace = EmptyArray.STACK_TRACE_ELEMENT;
        }
        return this;
    }

    private synchronized StackTraceElement[] getOurStackTrace() {
        if (stackTrace == EmptyArray.STACK_TRACE_ELEMENT
                || (stackTrace == null && backtrace != null)) {
            Object state = backtrace;
            stackTrace = state == null ? EmptyArray.STACK_TRACE_ELEMENT : nativeGetStackTrace(state);
            backtrace = null;
        }
        return stackTrace == null ? EmptyArray.STACK_TRACE_ELEMENT : stackTrace;
    }

    public StackTraceElement[] getStackTrace() {
        StackTraceElement[] trace = getOurStackTrace();
        StackTraceElement[] copy = new StackTraceElement[trace.length];
        System.arraycopy(trace, 0, copy, 0, trace.length);
        return copy;
    }

    public void setStackTrace(StackTraceElement[] trace) {
        StackTraceElement[] copy = new StackTraceElement[trace.length];
        for (int i = 0; i < trace.length; i++) {
            if (trace[i] == null) {
                throw new NullPointerException("trace[" + i + "]");
            }
            copy[i] = trace[i];
        }
        synchronized (this) {
            if (stackTrace == null && backtrace == null) {
                return;
            }
            stackTrace = copy;
            backtrace = null;
        }
    }

    public final synchronized void addSuppressed(Throwable exception) {
        if (exception == this) {
            throw new IllegalArgumentException("Self-suppression not permitted", exception);
        }
        if (exception == null) {
            throw new NullPointerException("Cannot suppress a null exception.");
        }
        if (suppressedExceptions == null) {
            return;
        }
        if (suppressedExceptions.isEmpty()) {
            suppressedExceptions = new ArrayList<Throwable>(1);
        }
        suppressedExceptions.add(exception);
    }

    public final synchronized Throwable[] getSuppressed() {
        if (suppressedExceptions == null || suppressedExceptions.isEmpty()) {
            return new Throwable[0];
        }
        Throwable[] out = new Throwable[suppressedExceptions.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = suppressedExceptions.get(i);
        }
        return out;
    }

    public void printStackTrace() {
        printStackTrace(System.err);
    }

    public void printStackTrace(PrintStream s) {
        synchronized (s) {
            s.println(this);
            StackTraceElement[] trace = getOurStackTrace();
            for (StackTraceElement e : trace) {
                s.println("\tat " + e);
            }
            for (Throwable t : getSuppressed()) {
                t.printEnclosed(s, trace, "Suppressed: ", "\t");
            }
            Throwable c = getCause();
            if (c != null) {
                c.printEnclosed(s, trace, "Caused by: ", "");
            }
        }
    }

    private void printEnclosed(PrintStream s, StackTraceElement[] enclosing, String caption,
            String prefix) {
        StackTraceElement[] trace = getOurStackTrace();
        int m = trace.length - 1;
        int n = enclosing.length - 1;
        while (m >= 0 && n >= 0 && trace[m].equals(enclosing[n])) {
            m--;
            n--;
        }
        int inCommon = trace.length - 1 - m;
        s.println(prefix + caption + this);
        for (int i = 0; i <= m; i++) {
            s.println(prefix + "\tat " + trace[i]);
        }
        if (inCommon != 0) {
            s.println(prefix + "\t... " + inCommon + " more");
        }
        for (Throwable t : getSuppressed()) {
            t.printEnclosed(s, trace, "Suppressed: ", prefix + "\t");
        }
        Throwable c = getCause();
        if (c != null) {
            c.printEnclosed(s, trace, "Caused by: ", prefix);
        }
    }

    @FastNative
    private static native Object nativeFillInStackTrace();

    @FastNative
    private static native StackTraceElement[] nativeGetStackTrace(Object stackState);

    // @generated-members
}
