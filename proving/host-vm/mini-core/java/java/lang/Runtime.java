/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.system.BaseDexClassLoader;
import dalvik.system.VMRuntime;
import dalvik.system.VMStack;

/**
 * The running VM as a Java object. ART looks up nativeLoad (WellKnownClasses::LateInit) to
 * recognise System.loadLibrary's caller; it, gc and exit are mini-core natives
 * (proving/host-vm/native/core_natives.cc) that call ART's openjdkjvm entry points (JVM_NativeLoad,
 * JVM_GC, JVM_Exit) when the process has them, and otherwise what those call.
 */
public class Runtime {
    private static final Runtime currentRuntime = new Runtime();

    private Thread[] hooks = new Thread[0];
    private int hookCount;
    private boolean shuttingDown;

    private Runtime() {
    }

    public static Runtime getRuntime() {
        return currentRuntime;
    }

    /**
     * Runs the shutdown hooks (each started, then each joined), then ends the process. A second
     * call, from a hook or another thread, ends it without waiting for them.
     */
    public void exit(int status) {
        Thread[] run;
        synchronized (this) {
            if (shuttingDown) {
                run = null;
            } else {
                shuttingDown = true;
                run = new Thread[hookCount];
                System.arraycopy(hooks, 0, run, 0, hookCount);
            }
        }
        if (run != null) {
            for (Thread hook : run) {
                hook.start();
            }
            for (Thread hook : run) {
                while (hook.isAlive()) {
                    try {
                        hook.join();
                    } catch (InterruptedException ignored) {
                        // Exit goes on; the hook must still end first.
                    }
                }
            }
        }
        nativeExit(status);
    }

    public synchronized void addShutdownHook(Thread hook) {
        if (hook == null) {
            throw new NullPointerException("hook == null");
        }
        if (shuttingDown) {
            throw new IllegalStateException("VM already shutting down");
        }
        if (hook.isAlive()) {
            throw new IllegalArgumentException("Hook already running");
        }
        for (int i = 0; i < hookCount; i++) {
            if (hooks[i] == hook) {
                throw new IllegalArgumentException("Hook previously registered");
            }
        }
        if (hookCount == hooks.length) {
            Thread[] more = new Thread[hooks.length * 2 + 1];
            System.arraycopy(hooks, 0, more, 0, hookCount);
            hooks = more;
        }
        hooks[hookCount++] = hook;
    }

    public synchronized boolean removeShutdownHook(Thread hook) {
        if (shuttingDown) {
            throw new IllegalStateException("VM already shutting down");
        }
        for (int i = 0; i < hookCount; i++) {
            if (hooks[i] == hook) {
                System.arraycopy(hooks, i + 1, hooks, i, hookCount - i - 1);
                hooks[--hookCount] = null;
                return true;
            }
        }
        return false;
    }

    public void halt(int status) {
        nativeExit(status);
    }

    /**
     * A full collection: through JVM_GC when the process has ART's openjdkjvm, else by queueing a
     * collection on ART's heap task processor and running its tasks here (no HeapTaskDaemon runs
     * them: Daemons starts none, so the processor is not running and hands them out at once).
     */
    public void gc() {
        if (!nativeGc()) {
            VMRuntime vm = VMRuntime.getRuntime();
            vm.requestConcurrentGC();
            vm.runHeapTasks();
        }
    }

    public void runFinalization() {
    }

    public int availableProcessors() {
        return nativeAvailableProcessors();
    }

    public long freeMemory() {
        return nativeMemory(0);
    }

    public long totalMemory() {
        return nativeMemory(1);
    }

    public long maxMemory() {
        return nativeMemory(2);
    }

    public void load(String filename) {
        load0(VMStack.getStackClass1(), filename);
    }

    void load0(Class<?> caller, String filename) {
        if (filename.indexOf('/') < 0) {
            throw new IllegalArgumentException("Expecting an absolute path of the library: "
                    + filename);
        }
        String error = nativeLoad(filename, caller == null ? null : caller.getClassLoader(), caller);
        if (error != null) {
            throw new UnsatisfiedLinkError(error);
        }
    }

    public void loadLibrary(String libname) {
        loadLibrary0(VMStack.getStackClass1(), libname);
    }

    void loadLibrary0(Class<?> caller, String libname) {
        if (libname.indexOf('/') >= 0) {
            throw new UnsatisfiedLinkError("Directory separator should not appear in library name: "
                    + libname);
        }
        ClassLoader loader = caller == null ? null : caller.getClassLoader();
        String file = System.mapLibraryName(libname);
        if (loader instanceof BaseDexClassLoader) {
            String dirs = ((BaseDexClassLoader) loader).getLdLibraryPath();
            for (String d : dirs.split(":")) {
                if (!d.isEmpty() && nativeLoad(d + "/" + file, loader, caller) == null) {
                    return;
                }
            }
        }
        String error = nativeLoad(file, loader, caller);
        if (error != null) {
            throw new UnsatisfiedLinkError(error);
        }
    }

    private static native String nativeLoad(String filename, ClassLoader loader, Class<?> caller);

    private static native void nativeExit(int status);

    private static native boolean nativeGc();

    private static native int nativeAvailableProcessors();

    private static native long nativeMemory(int which);

    // @generated-members
}
