/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;

/**
 * The runtime services mini-core routes to ART: System.gc (a full collection, which clears a weak
 * reference and enqueues it), System.load of a library (ART's JavaVMExt::LoadNativeLibrary), the
 * error for a library that is not there, and system properties from the runtime.
 */
public class RuntimeServices {
    static WeakReference<Object> makeWeak(ReferenceQueue<Object> q) {
        return new WeakReference<Object>(new Object(), q);
    }

    public static void main(String[] args) throws Exception {
        ReferenceQueue<Object> q = new ReferenceQueue<Object>();
        WeakReference<Object> weak = makeWeak(q);
        Object strong = new Object();
        WeakReference<Object> kept = new WeakReference<Object>(strong);
        System.gc();
        System.out.println("weak cleared " + (weak.get() == null) + ", enqueued "
                + (q.remove(5000) == weak) + ", kept " + (kept.get() == strong));

        System.load("/usr/lib/x86_64-linux-gnu/libz.so.1");
        System.out.println("load ok");
        try {
            System.load("/nonexistent/libnothing.so");
            System.out.println("load of a missing library did not fail");
        } catch (UnsatisfiedLinkError e) {
            System.out.println("missing library: UnsatisfiedLinkError "
                    + (e.getMessage().indexOf("libnothing.so") >= 0));
        }
        try {
            System.loadLibrary("nothing");
        } catch (UnsatisfiedLinkError e) {
            System.out.println("loadLibrary: UnsatisfiedLinkError");
        }

        System.out.println("java.class.path ends with .dex "
                + System.getProperty("java.class.path").endsWith(".dex")
                + ", line.separator " + (System.lineSeparator().equals("\n"))
                + ", os.arch " + System.getProperty("os.arch")
                + ", processors>0 " + (Runtime.getRuntime().availableProcessors() > 0));
        Thread.currentThread().setName("renamed");
        System.out.println("thread " + Thread.currentThread().getName());
    }
}
