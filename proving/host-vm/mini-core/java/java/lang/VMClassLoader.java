/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.annotation.optimization.FastNative;

/** ART's class-loading natives (runtime/native/java_lang_VMClassLoader.cc). */
class VMClassLoader {
    private VMClassLoader() {
    }

    @FastNative
    static native Class<?> findLoadedClass(ClassLoader loader, String name);

    // @generated-members
}
