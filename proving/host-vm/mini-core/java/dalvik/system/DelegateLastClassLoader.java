/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.system;

/** Looks in the boot class path, then its own dex files, then its parent. */
public final class DelegateLastClassLoader extends PathClassLoader {
    public DelegateLastClassLoader(String dexPath, ClassLoader parent) {
        super(dexPath, parent);
    }

    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        Class<?> c = findLoadedClass(name);
        if (c != null) {
            return c;
        }
        try {
            return Class.forName(name, false, null);
        } catch (ClassNotFoundException e) {
            // not a boot class
        }
        try {
            return findClass(name);
        } catch (ClassNotFoundException e) {
            return getParent().loadClass(name);
        }
    }

    // @generated-members
}
