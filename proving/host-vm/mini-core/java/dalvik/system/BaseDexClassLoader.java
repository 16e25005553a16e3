/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.system;

/**
 * A class loader over dex files. ART reads pathList -> dexElements -> dexFile -> mCookie to find
 * classes natively (ClassLinker::FindClassInBaseDexClassLoaderClassPath), and the two
 * shared-library arrays when they are not null.
 */
public class BaseDexClassLoader extends ClassLoader {
    private final DexPathList pathList;
    protected final ClassLoader[] sharedLibraryLoaders;
    protected final ClassLoader[] sharedLibraryLoadersAfter;
    private final String librarySearchPath;

    public BaseDexClassLoader(String dexPath, String librarySearchPath, ClassLoader parent) {
        super(parent);
        this.sharedLibraryLoaders = null;
        this.sharedLibraryLoadersAfter = null;
        this.librarySearchPath = librarySearchPath == null ? "" : librarySearchPath;
        this.pathList = new DexPathList(this, dexPath);
    }

    BaseDexClassLoader(DexFile[] files, ClassLoader parent) {
        super(parent);
        this.sharedLibraryLoaders = null;
        this.sharedLibraryLoadersAfter = null;
        this.librarySearchPath = "";
        this.pathList = new DexPathList(this, files);
    }

    protected Class<?> findClass(String name) throws ClassNotFoundException {
        Class<?> c = pathList.findClass(name);
        if (c == null) {
            throw new ClassNotFoundException("Didn't find class \"" + name + "\" on path: "
                    + pathList);
        }
        return c;
    }

    /** ART asks for this when a class of this loader loads a native library. */
    public String getLdLibraryPath() {
        return librarySearchPath;
    }

    protected String findLibrary(String name) {
        String file = "lib" + name + ".so";
        String[] dirs = librarySearchPath.split(":");
        for (String d : dirs) {
            if (!d.isEmpty()) {
                return d + "/" + file;
            }
        }
        return null;
    }

    public String toString() {
        return getClass().getName() + "[" + pathList + "]";
    }

    // @generated-members
}
