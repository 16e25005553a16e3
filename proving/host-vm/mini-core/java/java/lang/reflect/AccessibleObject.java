/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang.reflect;

/** The reflection objects' common base: `override` is mirror::AccessibleObject's flag_. */
public class AccessibleObject {
    boolean override;

    protected AccessibleObject() {
    }

    public boolean isAccessible() {
        return override;
    }

    public void setAccessible(boolean flag) {
        override = flag;
    }

    // @generated-members
}
