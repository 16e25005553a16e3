/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.system.PathClassLoader;
import dalvik.system.VMRuntime;

/**
 * Loads classes. Its instance fields are exactly mirror::ClassLoader's (class_linker_test.cc
 * ClassLoaderOffsets; ART checks the size at boot): no other instance state fits here. For the
 * class loaders it recognises (BootClassLoader, PathClassLoader, DexClassLoader, ...) ART looks
 * classes up natively without calling loadClass (ClassLinker::FindClassInBaseDexClassLoader).
 */
public abstract class ClassLoader {
    private transient Object packages;
    private final ClassLoader parent;
    private transient Object proxyCache;
    private transient long allocator;
    private transient long classTable;

    private static ClassLoader systemClassLoader;

    /** Called by ART at startup (Runtime::Start -> CreateSystemClassLoader). */
    public static synchronized ClassLoader getSystemClassLoader() {
        if (systemClassLoader == null) {
            String classPath = VMRuntime.getRuntime().classPath();
            if (classPath == null || classPath.isEmpty()) {
                classPath = ".";
            }
            systemClassLoader = new PathClassLoader(classPath, BootClassLoader.getInstance());
        }
        return systemClassLoader;
    }

    protected ClassLoader() {
        this(getSystemClassLoader());
    }

    protected ClassLoader(ClassLoader parent) {
        this.parent = parent;
    }

    ClassLoader(ClassLoader parent, boolean unused) {
        this.parent = parent;
    }

    public final ClassLoader getParent() {
        return parent;
    }

    public Class<?> loadClass(String name) throws ClassNotFoundException {
        return loadClass(name, false);
    }

    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        Class<?> c = findLoadedClass(name);
        if (c != null) {
            return c;
        }
        try {
            if (parent != null) {
                c = parent.loadClass(name, false);
            } else {
                c = BootClassLoader.getInstance().findClass(name);
            }
        } catch (ClassNotFoundException e) {
            // Not the parent's: look here.
        }
        if (c == null) {
            c = findClass(name);
        }
        return c;
    }

    protected Class<?> findClass(String name) throws ClassNotFoundException {
        throw new ClassNotFoundException(name);
    }

    protected final Class<?> findLoadedClass(String name) {
        ClassLoader loader = this == BootClassLoader.getInstance() ? null : this;
        return VMClassLoader.findLoadedClass(loader, name);
    }

    protected final Class<?> findSystemClass(String name) throws ClassNotFoundException {
        return Class.forName(name, false, getSystemClassLoader());
    }

    protected final void resolveClass(Class<?> c) {
    }

    protected String findLibrary(String libname) {
        return null;
    }

    // @generated-members
}
