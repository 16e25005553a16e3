/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.system;

import java.io.IOException;

/**
 * One opened dex (or jar/apk) file. mCookie is ART's handle (the long[] openDexFileNative returns)
 * that the class linker reads natively; all natives are ART's (runtime/native/dalvik_system_DexFile.cc).
 */
public final class DexFile {
    private Object mCookie;
    private final String mFileName;

    public DexFile(String fileName) throws IOException {
        this(fileName, null, null);
    }

    DexFile(String fileName, ClassLoader loader, DexPathList.Element[] elements) {
        mFileName = fileName;
        mCookie = openDexFileNative(fileName, null, 0, loader, elements);
    }

    public String getName() {
        return mFileName;
    }

    public Class<?> loadClass(String name, ClassLoader loader) {
        return loadClassBinaryName(name.replace('.', '/'), loader);
    }

    Class<?> loadClassBinaryName(String name, ClassLoader loader) {
        return defineClassNative(name.replace('.', '/'), loader, mCookie, this);
    }

    public String[] getClassNameList() {
        return getClassNameList(mCookie);
    }

    public void close() {
        if (mCookie != null && closeDexFile(mCookie)) {
            mCookie = null;
        }
    }

    public String toString() {
        return mFileName;
    }

    // @generated-members
}
