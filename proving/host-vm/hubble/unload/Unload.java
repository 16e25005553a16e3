/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.system.PathClassLoader;
import java.lang.ref.WeakReference;

/**
 * Class unloading under Hubble, for real: plugin A (plugin-a.dex, plugin.Alpha) is loaded through
 * its own PathClassLoader, its methods run traced, every reference to it is dropped and the
 * program collects until ART has unloaded the loader (ClassLinker::DeleteClassLoader, whose hook
 * names A's methods before their memory goes back to the arena pool). Then plugin B (same shape,
 * plugin.Beta) is loaded and run: its ArtMethods may take the addresses A's had. One flush of
 * every thread afterwards (many-thread mode) holds both; the program's own count says which
 * records are whose, and the trace must name each by its own class.
 */
public class Unload {
    static String dex(String name) {
        for (String p : System.getProperty("java.class.path").split(":")) {
            if (p.endsWith("/" + name)) {
                return p;
            }
        }
        throw new IllegalStateException("no " + name + " in " + System.getProperty("java.class.path"));
    }

    /** Loads CLASS from DEX in a loader of its own, runs it ROUNDS times, returns a weak
     * reference to the loader (nothing else of it survives this frame). */
    static WeakReference<ClassLoader> use(String dex, String cls, int rounds, int[] counts)
            throws Exception {
        ClassLoader boot = ClassLoader.getSystemClassLoader().getParent();
        PathClassLoader loader = new PathClassLoader(dex, boot);
        Class<?> c = loader.loadClass(cls);
        Runnable r = (Runnable) c.newInstance();
        for (int i = 0; i < rounds; i++) {
            r.run();
        }
        // "<Name> steps S runs R": the plugin's own counts, read without reflection on fields.
        String[] w = r.toString().split(" ");
        counts[1] = Integer.parseInt(w[2]);
        counts[0] = Integer.parseInt(w[4]);
        return new WeakReference<ClassLoader>(loader);
    }

    static boolean collect(WeakReference<?> ref) throws InterruptedException {
        long deadline = System.nanoTime() + 30000000000L;
        int gcs = 0;
        while (ref.get() != null && System.nanoTime() < deadline) {
            Runtime.getRuntime().gc();
            gcs++;
            if (ref.get() != null) {
                Thread.sleep(20);
            }
        }
        System.err.println("collections until the loader was cleared: " + gcs);
        return ref.get() == null;
    }

    public static void main(String[] args) throws Exception {
        Thread.sleep(300); // the control thread starts tracing as the app starts
        int[] a = new int[2];
        int[] b = new int[2];
        WeakReference<ClassLoader> first = use(dex("plugin-a.dex"), "plugin.Alpha", 50, a);
        if (!collect(first)) {
            throw new IllegalStateException("plugin A's loader was never collected");
        }
        // More collections: the loader's memory goes at the GC after the one that cleared it.
        for (int i = 0; i < 3; i++) {
            Runtime.getRuntime().gc();
            Thread.sleep(20);
        }
        WeakReference<ClassLoader> second = use(dex("plugin-b.dex"), "plugin.Beta", 30, b);
        System.out.println("calls plugin.Alpha.run " + a[0]);
        System.out.println("calls plugin.Alpha.step " + a[1]);
        System.out.println("calls plugin.Beta.run " + b[0]);
        System.out.println("calls plugin.Beta.step " + b[1]);
        System.out.println("parent plugin.Alpha.step plugin.Alpha.run");
        System.out.println("parent plugin.Beta.step plugin.Beta.run");
        Thread.currentThread().setName("HUBBLE:flush:unload");
        Thread.sleep(500);
        System.err.println("plugin B's loader " + (second.get() == null ? "collected" : "alive")
                + " at the flush");
    }
}
