/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package hubble.hostvm;

import dalvik.system.VMRuntime;
import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * What ActivityThread does for an app before its code runs, on the host VM: it names the
 * process's package and data directory (VMRuntime.setProcessPackageName, then
 * setProcessDataDirectory, where ART starts Hubble's control plane for a selected package),
 * then runs the program's main. scripts/art-run runs it when a Hubble property or a trace
 * directory is given:
 *
 *   HostApp [--flush-at-exit REASON] PACKAGE DATA_DIR MAIN_CLASS [ARGS...]
 *
 * With --flush-at-exit, main runs once Hubble traces the main thread (a first flush, reason
 * "start", was written), and the main thread asks Hubble to flush it (the thread-name hook)
 * when the program ends, whether main returns, throws or calls System.exit (a shutdown hook);
 * the process waits until that trace is in DATA_DIR/files/hubble, so a program that knows
 * nothing of Hubble (ART's run-tests) still leaves its trace behind.
 */
public final class HostApp {
    private static final int ACC_STATIC = 0x0008;  // mini-core has no java.lang.reflect.Modifier

    private HostApp() {}

    public static void main(String[] args) throws Throwable {
        String flushReason = null;
        int first = 0;
        if (args.length >= 2 && args[0].equals("--flush-at-exit")) {
            flushReason = args[1];
            first = 2;
        }
        if (args.length - first < 3) {
            throw new IllegalArgumentException(
                    "usage: HostApp [--flush-at-exit REASON] PACKAGE DATA_DIR MAIN_CLASS [ARGS...]");
        }
        VMRuntime.setProcessPackageName(args[first]);
        VMRuntime.setProcessDataDirectory(args[first + 1]);
        Class<?> program = Class.forName(args[first + 2], true, HostApp.class.getClassLoader());
        Method main = null;
        for (Method m : program.getDeclaredMethods()) {
            if (m.getName().equals("main") && (m.getModifiers() & ACC_STATIC) != 0) {
                main = m;
            }
        }
        if (main == null) {
            throw new NoSuchMethodError("no static main(String[]) in " + args[first + 2]);
        }
        String[] rest = new String[args.length - first - 3];
        System.arraycopy(args, first + 3, rest, 0, rest.length);
        ExitFlush flush = null;
        if (flushReason != null) {
            File dir = new File(new File(args[first + 1], "files"), "hubble");
            awaitTracing(dir);
            flush = new ExitFlush(Thread.currentThread(), flushReason, dir);
            Runtime.getRuntime().addShutdownHook(new Thread(flush, "HostApp exit flush"));
        }
        try {
            main.invoke(null, (Object) rest);
        } catch (InvocationTargetException e) {
            throw e.getCause();  // the program's own exception, uncaught as it would be
        } finally {
            if (flush != null) {
                flush.run();
            }
        }
    }

    /**
     * The control plane starts tracing the app's threads soon after the package is named, on its
     * own thread; a device's app code runs long after that, a test's main at once. So this thread
     * asks for a flush of itself (reason "start") until one is written: then it is traced.
     */
    private static void awaitTracing(File dir) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            requestFlush(Thread.currentThread(), "start");
            if (waitFor(dir, "-start.hubble", 200)) {
                return;
            }
        }
        System.err.println("HostApp: Hubble did not trace the main thread within 30 s");
    }

    /**
     * Asks Hubble to flush THREAD through the thread-name hook, then gives the thread its name
     * back (the hook keeps the native name; the Java field takes the command).
     */
    static void requestFlush(Thread thread, String reason) {
        String name = thread.getName();
        thread.setName("HUBBLE:flush:" + reason);
        thread.setName(name);
    }

    /** Whether a file whose name ends in SUFFIX shows in DIR within MILLIS. */
    static boolean waitFor(File dir, String suffix, long millis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        do {
            String[] names = dir.list();
            for (int i = 0; names != null && i < names.length; i++) {
                if (names[i].endsWith(suffix)) {
                    return true;
                }
            }
            Thread.sleep(5);
        } while (System.currentTimeMillis() < deadline);
        return false;
    }

    /**
     * Flushes the main thread once: renames it HUBBLE:flush:REASON (from a shutdown hook, the
     * rename of another thread, which ART makes while that thread is suspended), then waits for
     * a trace whose name ends in -REASON.hubble (Hubble writes it aside and renames it into
     * place, so a name that shows is a whole file). Says so on stderr if none comes.
     */
    private static final class ExitFlush implements Runnable {
        private static final long WAIT_MS = 30_000;
        private final Thread traced;
        private final String reason;
        private final File dir;
        private boolean done;

        ExitFlush(Thread traced, String reason, File dir) {
            this.traced = traced;
            this.reason = reason;
            this.dir = dir;
        }

        public void run() {
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
            }
            requestFlush(traced, reason);
            String suffix = "-" + reason + ".hubble";
            try {
                if (waitFor(dir, suffix, WAIT_MS)) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("HostApp: no trace ending in " + suffix + " in " + dir + " after "
                    + WAIT_MS / 1000 + " s");
        }
    }
}
