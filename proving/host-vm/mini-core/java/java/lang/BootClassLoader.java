/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * The Java face of the boot class path: ART treats a loader of exactly this class as "the boot
 * class loader" (ClassLinker::IsBootClassLoader) and may create instances itself (it looks up
 * BootClassLoader.<init>()V).
 */
class BootClassLoader extends ClassLoader {
    private static BootClassLoader instance;

    public static synchronized BootClassLoader getInstance() {
        if (instance == null) {
            instance = new BootClassLoader();
        }
        return instance;
    }

    public BootClassLoader() {
        super(null, true);
    }

    protected Class<?> findClass(String name) throws ClassNotFoundException {
        return Class.classForName(name, false, null);
    }

    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        Class<?> c = findLoadedClass(name);
        return c != null ? c : findClass(name);
    }

    // @generated-members
}
