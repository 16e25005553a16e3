/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.system.PathClassLoader;
import java.lang.ref.WeakReference;

/**
 * A second dex (plugin/, built by tests/run into plugin.dex) loaded through its own
 * dalvik.system.PathClassLoader(String, ClassLoader) whose parent is the boot class loader:
 * loadClass, Class.newInstance, getClassLoader, getName, the class's static state separate from
 * the same class loaded by the application loader, and classes the plugin loader cannot see.
 * Then every reference to the loader, its classes and their instances is dropped and the program
 * collects until a WeakReference to the loader is cleared; ART then unloads the loader: its GC
 * calls ClassLinker::CleanupClassLoaders, which logs "Freeing class loader" (VLOG class_linker,
 * on with -verbose:class, at INFO) and calls DeleteClassLoader for it (vm-args, log-tags and
 * expected-log.txt hold the check on ART's log).
 */
public class ClassLoaders {
    static String pluginPath() {
        for (String p : System.getProperty("java.class.path").split(":")) {
            if (p.endsWith("/plugin.dex")) {
                return p;
            }
        }
        throw new IllegalStateException("no plugin.dex in " + System.getProperty("java.class.path"));
    }

    /** Everything that touches the plugin loader, so that no frame of main keeps it alive. */
    static WeakReference<?>[] usePlugin(String path, ClassLoader parent) throws Exception {
        PathClassLoader loader = new PathClassLoader(path, parent);
        System.out.println("loader " + loader.getClass().getName() + ", parent "
                + loader.getParent().getClass().getName());
        Class<?> c = loader.loadClass("plugin.Greeter");
        System.out.println("loaded " + c.getName() + ", its loader is ours "
                + (c.getClassLoader() == loader) + ", loaded again the same "
                + (loader.loadClass("plugin.Greeter") == c));
        Object first = c.newInstance();
        Object second = c.newInstance();
        ((Runnable) second).run();
        System.out.println("instances " + first + ", " + second + "; Runnable "
                + (first instanceof Runnable) + ", its Runnable is the boot class path's "
                + (loader.loadClass("java.lang.Runnable") == Runnable.class));

        // The application loader has the same dex on its path: the same name, another class.
        Class<?> appCopy = Class.forName("plugin.Greeter");
        Object appInstance = appCopy.newInstance();
        System.out.println("application copy is another class " + (appCopy != c)
                + ", loaded by the system loader "
                + (appCopy.getClassLoader() == ClassLoader.getSystemClassLoader())
                + ", its own static count: " + appInstance);
        try {
            loader.loadClass("ClassLoaders");
            System.out.println("the plugin loader sees the application's classes");
        } catch (ClassNotFoundException e) {
            System.out.println("the plugin loader does not see ClassLoaders: ClassNotFoundException");
        }
        return new WeakReference<?>[] {new WeakReference<Object>(loader),
            new WeakReference<Object>(c), new WeakReference<Object>(first)};
    }

    public static void main(String[] args) throws Exception {
        ClassLoader boot = ClassLoader.getSystemClassLoader().getParent();
        WeakReference<?>[] refs = usePlugin(pluginPath(), boot);
        // Collect until the loader's weak reference is cleared, for up to 30 s. Not a fixed
        // number of collections: once (pristine VM, --mode jit) 20 back-to-back collections all
        // found the loader alive; the cause was not pinned down (a JIT worker holding the class
        // while it compiles code whose inline cache saw it would do that), so the collections are
        // now spaced out. How many it took goes to stderr, which is not compared.
        int gcs = 0;
        long deadline = System.nanoTime() + 30000000000L;
        while (refs[0].get() != null && System.nanoTime() < deadline) {
            if (gcs % 2 == 0) {
                System.gc();
            } else {
                Runtime.getRuntime().gc();
            }
            gcs++;
            if (refs[0].get() != null) {
                Thread.sleep(20);
            }
        }
        System.err.println("ClassLoaders: collections until the loader's weak reference was cleared: "
                + gcs);
        System.out.println("after collections: loader cleared " + (refs[0].get() == null)
                + ", class cleared " + (refs[1].get() == null) + ", instance cleared "
                + (refs[2].get() == null));
        // One more collection after the one that cleared the loader's weak reference (ART frees
        // the loader in the collection that finds it dead; this one shows nothing breaks after).
        System.gc();
        System.out.println("application copy still works: "
                + Class.forName("plugin.Greeter").newInstance());
    }
}
