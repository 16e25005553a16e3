/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.system;

/** The dex files of a BaseDexClassLoader, in search order (ART walks dexElements natively). */
public final class DexPathList {
    private final ClassLoader definingContext;
    private Element[] dexElements;

    /** One entry of the path. */
    static class Element {
        private final DexFile dexFile;
        private final String path;

        Element(DexFile dexFile, String path) {
            this.dexFile = dexFile;
            this.path = path;
        }

        Class<?> findClass(String name, ClassLoader loader) {
            return dexFile != null ? dexFile.loadClassBinaryName(name, loader) : null;
        }

        public String toString() {
            return "dex file \"" + path + "\"";
        }

        // @generated-members
    }

    DexPathList(ClassLoader definingContext, String dexPath) {
        this.definingContext = definingContext;
        String[] paths = dexPath.split(":");
        Element[] elements = new Element[paths.length];
        int n = 0;
        for (String p : paths) {
            if (p.isEmpty()) {
                continue;
            }
            DexFile f;
            try {
                f = new DexFile(p, definingContext, null);
            } catch (Exception e) {
                // Not a dex file ART can open (missing, or another kind of file): the path
                // goes on without it, as a class path with a bad entry does on Android.
                continue;
            }
            elements[n++] = new Element(f, p);
        }
        dexElements = new Element[n];
        System.arraycopy(elements, 0, dexElements, 0, n);
    }

    DexPathList(ClassLoader definingContext, DexFile[] files) {
        this.definingContext = definingContext;
        dexElements = new Element[files.length];
        for (int i = 0; i < files.length; i++) {
            dexElements[i] = new Element(files[i], files[i].getName());
        }
    }

    Class<?> findClass(String name) {
        for (Element e : dexElements) {
            Class<?> c = e.findClass(name, definingContext);
            if (c != null) {
                return c;
            }
        }
        return null;
    }

    public String toString() {
        StringBuilder sb = new StringBuilder("DexPathList[");
        for (int i = 0; i < dexElements.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(dexElements[i]);
        }
        return sb.append("]").toString();
    }

    // @generated-members
}
