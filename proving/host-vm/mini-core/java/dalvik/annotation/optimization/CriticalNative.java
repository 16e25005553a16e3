/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package dalvik.annotation.optimization;

/**
 * ART reads this annotation by descriptor when it links a method (dex_file_annotations.cc wants
 * it with "build" visibility, which is what the default CLASS retention becomes in dex).
 */
public @interface CriticalNative {
}
