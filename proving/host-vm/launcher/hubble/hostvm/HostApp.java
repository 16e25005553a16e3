/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package hubble.hostvm;

import dalvik.system.VMRuntime;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * What ActivityThread does for an app before its code runs, on the host VM: it names the
 * process's package and data directory (VMRuntime.setProcessPackageName, then
 * setProcessDataDirectory, where ART starts Hubble's control plane for a selected package),
 * then runs the program's main. scripts/art-run runs it when a Hubble property or a trace
 * directory is given:
 *
 *   HostApp PACKAGE DATA_DIR MAIN_CLASS [ARGS...]
 */
public final class HostApp {
    private static final int ACC_STATIC = 0x0008;  // mini-core has no java.lang.reflect.Modifier

    private HostApp() {}

    public static void main(String[] args) throws Throwable {
        if (args.length < 3) {
            throw new IllegalArgumentException("usage: HostApp PACKAGE DATA_DIR MAIN_CLASS [ARGS...]");
        }
        VMRuntime.setProcessPackageName(args[0]);
        VMRuntime.setProcessDataDirectory(args[1]);
        Class<?> program = Class.forName(args[2], true, HostApp.class.getClassLoader());
        Method main = null;
        for (Method m : program.getDeclaredMethods()) {
            if (m.getName().equals("main") && (m.getModifiers() & ACC_STATIC) != 0) {
                main = m;
            }
        }
        if (main == null) {
            throw new NoSuchMethodError("no static main(String[]) in " + args[2]);
        }
        String[] rest = new String[args.length - 3];
        System.arraycopy(args, 3, rest, 0, rest.length);
        try {
            main.invoke(null, (Object) rest);
        } catch (InvocationTargetException e) {
            throw e.getCause();  // the program's own exception, uncaught as it would be
        }
    }
}
