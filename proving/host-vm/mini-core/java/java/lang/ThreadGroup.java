/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

/**
 * A group of threads. ART reads the two roots (systemThreadGroup, mainThreadGroup) after this
 * class's initializer has run (Runtime::InitThreadGroups), and calls add/threadTerminated as
 * threads attach and die.
 */
public class ThreadGroup implements Thread.UncaughtExceptionHandler {
    static final ThreadGroup systemThreadGroup = new ThreadGroup();
    static final ThreadGroup mainThreadGroup = new ThreadGroup(systemThreadGroup, "main");

    final ThreadGroup parent;
    final String name;
    int ngroups;
    ThreadGroup[] groups;
    private int nthreads;
    private Thread[] threads;
    private int maxPriority = Thread.MAX_PRIORITY;
    private boolean daemon;

    private ThreadGroup() {
        this.parent = null;
        this.name = "system";
    }

    public ThreadGroup(String name) {
        this(Thread.currentThread().getThreadGroup(), name);
    }

    public ThreadGroup(ThreadGroup parent, String name) {
        if (parent == null) {
            throw new NullPointerException("parent == null");
        }
        this.parent = parent;
        this.name = name;
        this.maxPriority = parent.maxPriority;
        this.daemon = parent.daemon;
        parent.addGroup(this);
    }

    private synchronized void addGroup(ThreadGroup g) {
        if (groups == null) {
            groups = new ThreadGroup[4];
        } else if (ngroups == groups.length) {
            ThreadGroup[] bigger = new ThreadGroup[ngroups * 2];
            System.arraycopy(groups, 0, bigger, 0, ngroups);
            groups = bigger;
        }
        groups[ngroups++] = g;
    }

    public final String getName() {
        return name;
    }

    public final ThreadGroup getParent() {
        return parent;
    }

    public final int getMaxPriority() {
        return maxPriority;
    }

    public final boolean isDaemon() {
        return daemon;
    }

    public synchronized int activeCount() {
        int n = nthreads;
        for (int i = 0; i < ngroups; i++) {
            n += groups[i].activeCount();
        }
        return n;
    }

    /** ART calls this for attached threads; Thread.start() for the others. */
    void add(Thread t) {
        synchronized (this) {
            if (threads == null) {
                threads = new Thread[4];
            } else if (nthreads == threads.length) {
                Thread[] bigger = new Thread[nthreads * 2];
                System.arraycopy(threads, 0, bigger, 0, nthreads);
                threads = bigger;
            }
            threads[nthreads++] = t;
        }
    }

    /** ART calls this when a thread dies (Thread::RemoveFromThreadGroup). */
    void threadTerminated(Thread t) {
        synchronized (this) {
            for (int i = 0; i < nthreads; i++) {
                if (threads[i] == t) {
                    System.arraycopy(threads, i + 1, threads, i, nthreads - i - 1);
                    threads[--nthreads] = null;
                    break;
                }
            }
        }
    }

    public void uncaughtException(Thread t, Throwable e) {
        if (parent != null) {
            parent.uncaughtException(t, e);
            return;
        }
        Thread.UncaughtExceptionHandler h = Thread.getDefaultUncaughtExceptionHandler();
        if (h != null) {
            h.uncaughtException(t, e);
        } else {
            System.err.print("Exception in thread \"" + t.getName() + "\" ");
            e.printStackTrace(System.err);
        }
    }

    public String toString() {
        return getClass().getName() + "[name=" + name + ",maxpri=" + maxPriority + "]";
    }

    // @generated-members
}
