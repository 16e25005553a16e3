/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent.atomic;

import java.lang.reflect.Field;

/**
 * What the field updaters and AtomicReferenceArray share: ART's own sun.misc.Unsafe natives
 * (runtime/native/sun_misc_Unsafe.cc, registered whatever the boot class path), reached through
 * an instance of a subclass (Unsafe's constructor is protected), and a field's offset from ART's
 * reflection (Class.getDeclaredField, Field.getOffset).
 */
final class Fields extends sun.misc.Unsafe {
    static final sun.misc.Unsafe U = new Fields();

    private Fields() {
    }

    /** The offset of TCLASS's instance field NAME, which must be volatile and of type TYPE. */
    static long offset(Class<?> tclass, String name, Class<?> type) {
        Field f;
        try {
            f = tclass.getDeclaredField(name);
        } catch (NoSuchFieldException e) {
            throw new RuntimeException(e);
        }
        int mods = f.getModifiers();
        if ((mods & 0x0008) != 0) {
            throw new IllegalArgumentException("static field: " + name);
        }
        if ((mods & 0x0040) == 0) {
            throw new IllegalArgumentException("Must be volatile type: " + name);
        }
        Class<?> actual = f.getType();
        if (type.isPrimitive() ? actual != type : actual.isPrimitive() || !type.isAssignableFrom(actual)) {
            throw new ClassCastException(name + " is a " + actual.getName() + ", not a " + type.getName());
        }
        return f.getOffset();
    }

    static void check(Class<?> tclass, Object obj) {
        if (!tclass.isInstance(obj)) {
            throw new ClassCastException("not a " + tclass.getName() + ": " + obj);
        }
    }
}
