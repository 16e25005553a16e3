/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.annotation.optimization.FastNative;

/**
 * A thread of execution. ART owns the native side: it builds the peer of every attached thread
 * (the main thread included) with Thread(ThreadGroup, String, int, boolean), calls run() on the
 * threads nativeCreate starts, dispatchUncaughtException(Throwable) when one dies by an exception,
 * and reads/writes the fields WellKnownClasses names (nativePeer, name, group, lock, ...).
 */
public class Thread implements Runnable {
    public static final int MIN_PRIORITY = 1;
    public static final int NORM_PRIORITY = 5;
    public static final int MAX_PRIORITY = 10;

    private static int threadCount;
    private static volatile UncaughtExceptionHandler defaultHandler;

    volatile ThreadGroup group;
    volatile String name;
    volatile int priority;
    boolean daemon;
    boolean systemDaemon;
    boolean unparkedBeforeStart;
    volatile long nativePeer;
    volatile Object parkBlocker;
    final Object lock = new Object();
    ClassLoader contextClassLoader;

    private Runnable target;
    private long stackSize;
    private long tid;
    private boolean started;
    private volatile UncaughtExceptionHandler handler;

    /** What a thread that dies by an exception hands it to. */
    public interface UncaughtExceptionHandler {
        void uncaughtException(Thread t, Throwable e);
    }

    /** Called by ART (Thread::CreatePeer) for threads that attach, "main" among them. */
    Thread(ThreadGroup group, String name, int priority, boolean daemon) {
        this.group = group;
        this.name = name != null ? name : "Thread-" + nextId();
        this.priority = priority;
        this.daemon = daemon;
        this.tid = nextId();
        Thread parent = currentThread();
        this.contextClassLoader = parent != null ? parent.contextClassLoader : null;
    }

    public Thread() {
        this(null, null, null, 0);
    }

    public Thread(Runnable target) {
        this(null, target, null, 0);
    }

    public Thread(String name) {
        this(null, null, name, 0);
    }

    public Thread(Runnable target, String name) {
        this(null, target, name, 0);
    }

    public Thread(ThreadGroup group, Runnable target) {
        this(group, target, null, 0);
    }

    public Thread(ThreadGroup group, Runnable target, String name) {
        this(group, target, name, 0);
    }

    public Thread(ThreadGroup group, Runnable target, String name, long stackSize) {
        Thread parent = currentThread();
        if (group == null) {
            group = parent.getThreadGroup();
        }
        this.group = group;
        this.target = target;
        this.name = name != null ? name : "Thread-" + nextId();
        this.priority = parent.getPriority();
        this.daemon = parent.isDaemon();
        this.contextClassLoader = parent.contextClassLoader;
        this.stackSize = stackSize;
        this.tid = nextId();
    }

    private static synchronized int nextId() {
        return ++threadCount;
    }

    @FastNative
    public static native Thread currentThread();

    @FastNative
    public static native boolean interrupted();

    public void run() {
        Runnable r = target;
        if (r != null) {
            r.run();
        }
    }

    public synchronized void start() {
        if (started) {
            throw new IllegalStateException("Thread already started");
        }
        group.add(this);
        started = true;
        nativeCreate(this, stackSize, daemon);
    }

    public final boolean isAlive() {
        return nativePeer != 0;
    }

    public final void join() throws InterruptedException {
        synchronized (lock) {
            while (isAlive()) {
                lock.wait(0);
            }
        }
    }

    public final void join(long millis) throws InterruptedException {
        if (millis == 0) {
            join();
            return;
        }
        long deadline = System.currentTimeMillis() + millis;
        synchronized (lock) {
            while (isAlive()) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    break;
                }
                lock.wait(left);
            }
        }
    }

    public static void sleep(long millis) throws InterruptedException {
        sleep(millis, 0);
    }

    public static void sleep(long millis, int nanos) throws InterruptedException {
        if (millis < 0) {
            throw new IllegalArgumentException("millis < 0: " + millis);
        }
        if (millis == 0 && nanos == 0) {
            if (interrupted()) {
                throw new InterruptedException();
            }
            return;
        }
        Object l = currentThread().lock;
        synchronized (l) {
            sleep(l, millis, nanos);
        }
    }

    @FastNative
    private static native void sleep(Object lock, long millis, int nanos)
            throws InterruptedException;

    /** Registered by ART (java_lang_Thread.cc) with an unused second parameter. */
    public static native void yield();

    public void interrupt() {
        interrupt0();
    }

    @FastNative
    public native boolean isInterrupted();

    public final String getName() {
        return name;
    }

    public final synchronized void setName(String name) {
        if (name == null) {
            throw new NullPointerException("name == null");
        }
        this.name = name;
        if (isAlive()) {
            setNativeName(name);
        }
    }

    public final int getPriority() {
        return priority;
    }

    public final void setPriority(int p) {
        if (p < MIN_PRIORITY || p > MAX_PRIORITY) {
            throw new IllegalArgumentException("Priority out of range: " + p);
        }
        priority = p;
        if (isAlive()) {
            setPriority0(p);
        }
    }

    public final boolean isDaemon() {
        return daemon;
    }

    public final void setDaemon(boolean on) {
        if (started) {
            throw new IllegalStateException("Thread already started");
        }
        daemon = on;
    }

    public final ThreadGroup getThreadGroup() {
        return isAlive() || !started ? group : null;
    }

    public long getId() {
        return tid;
    }

    public ClassLoader getContextClassLoader() {
        return contextClassLoader;
    }

    public void setContextClassLoader(ClassLoader loader) {
        contextClassLoader = loader;
    }

    public StackTraceElement[] getStackTrace() {
        StackTraceElement[] trace = dalvik.system.VMStack.getThreadStackTrace(this);
        return trace != null ? trace : libcore.util.EmptyArray.STACK_TRACE_ELEMENT;
    }

    public static void dumpStack() {
        new Exception("Stack trace").printStackTrace();
    }

    public String toString() {
        ThreadGroup g = group;
        return "Thread[" + name + "," + priority + "," + (g != null ? g.getName() : "") + "]";
    }

    public static void setDefaultUncaughtExceptionHandler(UncaughtExceptionHandler h) {
        defaultHandler = h;
    }

    public static UncaughtExceptionHandler getDefaultUncaughtExceptionHandler() {
        return defaultHandler;
    }

    public void setUncaughtExceptionHandler(UncaughtExceptionHandler h) {
        handler = h;
    }

    public UncaughtExceptionHandler getUncaughtExceptionHandler() {
        UncaughtExceptionHandler h = handler;
        return h != null ? h : group;
    }

    /** ART calls this (InvokeFinal) when the thread's run() ends by an exception. */
    public final void dispatchUncaughtException(Throwable e) {
        UncaughtExceptionHandler h = getUncaughtExceptionHandler();
        if (h != null) {
            h.uncaughtException(this, e);
        } else {
            System.err.print("Exception in thread \"" + name + "\" ");
            e.printStackTrace(System.err);
        }
    }

    // @generated-members
}
