/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package plugin;

/** Resolved from Greeter: a class the plugin's loader must find in its own dex. */
class Helper {
    String say() {
        return "same loader " + (Helper.class.getClassLoader() == Greeter.class.getClassLoader());
    }
}
