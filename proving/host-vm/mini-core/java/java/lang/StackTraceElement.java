/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * One frame of a stack trace. ART allocates these itself (mirror::StackTraceElement, exactly these
 * four instance fields: class_linker_test.cc StackTraceElementOffsets).
 */
public final class StackTraceElement implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    private String declaringClass;
    private String fileName;
    private String methodName;
    private int lineNumber;

    public StackTraceElement(String declaringClass, String methodName, String fileName,
            int lineNumber) {
        if (declaringClass == null || methodName == null) {
            throw new NullPointerException();
        }
        this.declaringClass = declaringClass;
        this.methodName = methodName;
        this.fileName = fileName;
        this.lineNumber = lineNumber;
    }

    public String getClassName() {
        return declaringClass;
    }

    public String getMethodName() {
        return methodName;
    }

    public String getFileName() {
        return fileName;
    }

    public int getLineNumber() {
        return lineNumber;
    }

    public boolean isNativeMethod() {
        return lineNumber == -2;
    }

    public String toString() {
        String where;
        if (isNativeMethod()) {
            where = "(Native Method)";
        } else if (fileName == null) {
            where = "(Unknown Source)";
        } else if (lineNumber >= 0) {
            where = "(" + fileName + ":" + lineNumber + ")";
        } else {
            where = "(" + fileName + ")";
        }
        return declaringClass + "." + methodName + where;
    }

    public boolean equals(Object o) {
        if (!(o instanceof StackTraceElement)) {
            return false;
        }
        StackTraceElement e = (StackTraceElement) o;
        return e.declaringClass.equals(declaringClass) && e.methodName.equals(methodName)
                && e.lineNumber == lineNumber
                && (fileName == null ? e.fileName == null : fileName.equals(e.fileName));
    }

    public int hashCode() {
        return 31 * declaringClass.hashCode() + methodName.hashCode() + lineNumber;
    }

    // @generated-members
}
