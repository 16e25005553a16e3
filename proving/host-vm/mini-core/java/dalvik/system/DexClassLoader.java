/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.system;

/** A class loader over dex/jar files given at run time. */
public class DexClassLoader extends BaseDexClassLoader {
    public DexClassLoader(String dexPath, String optimizedDirectory, String librarySearchPath,
            ClassLoader parent) {
        super(dexPath, librarySearchPath, parent);
    }

    // @generated-members
}
