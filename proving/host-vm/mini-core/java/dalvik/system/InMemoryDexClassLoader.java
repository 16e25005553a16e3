/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.system;

import java.nio.ByteBuffer;

/** A class loader over dex files held in memory (not supported by mini-core yet). */
public final class InMemoryDexClassLoader extends BaseDexClassLoader {
    public InMemoryDexClassLoader(ByteBuffer dexBuffer, ClassLoader parent) {
        super(new DexFile[0], parent);
        throw new UnsupportedOperationException("mini-core: in-memory dex files");
    }

    // @generated-members
}
