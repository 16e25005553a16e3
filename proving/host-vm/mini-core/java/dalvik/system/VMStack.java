/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.system;

/** Stack inspection; the natives are ART's (runtime/native/dalvik_system_VMStack.cc). */
public final class VMStack {
    private VMStack() {
    }

    /**
     * The class of the method that called the method calling this one (getStackClass2 counts its
     * own frame, this one's and our caller's).
     */
    public static Class<?> getStackClass1() {
        return getStackClass2();
    }

    // @generated-members
}
