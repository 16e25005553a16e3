/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.io;

/**
 * A path name, and the little of the file system a program on the host VM asks about: whether a
 * file exists, whether it is a directory, and a directory's names (stat(2) and readdir(3), the
 * mini-core natives in proving/host-vm/native/core_natives.cc).
 */
public class File implements Serializable, Comparable<File> {
    public static final char separatorChar = '/';
    public static final String separator = "/";
    public static final char pathSeparatorChar = ':';
    public static final String pathSeparator = ":";

    private final String path;

    public File(String pathname) {
        if (pathname == null) {
            throw new NullPointerException("pathname");
        }
        this.path = trimTrailingSlash(pathname);
    }

    public File(String parent, String child) {
        this(parent == null ? child : join(parent, child));
    }

    public File(File parent, String child) {
        this(parent == null ? child : join(parent.path, child));
    }

    private static String join(String parent, String child) {
        if (child == null) {
            throw new NullPointerException("child");
        }
        if (parent.isEmpty()) {
            return child;
        }
        return parent.endsWith(separator) ? parent + child : parent + separator + child;
    }

    private static String trimTrailingSlash(String p) {
        int end = p.length();
        while (end > 1 && p.charAt(end - 1) == separatorChar) {
            end--;
        }
        return p.substring(0, end);
    }

    public String getPath() {
        return path;
    }

    public String getName() {
        return path.substring(path.lastIndexOf(separatorChar) + 1);
    }

    public String getParent() {
        int i = path.lastIndexOf(separatorChar);
        if (i < 0) {
            return null;
        }
        return i == 0 ? (path.length() > 1 ? separator : null) : path.substring(0, i);
    }

    public boolean exists() {
        return mode(path) != -1;
    }

    public boolean isDirectory() {
        int m = mode(path);
        return m != -1 && (m & S_IFMT) == S_IFDIR;
    }

    public boolean isFile() {
        int m = mode(path);
        return m != -1 && (m & S_IFMT) == S_IFREG;
    }

    /** The directory's entries without "." and "..", in readdir's order; null if it cannot. */
    public String[] list() {
        return listNames(path);
    }

    public int compareTo(File other) {
        return path.compareTo(other.path);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof File && ((File) o).path.equals(path);
    }

    @Override
    public int hashCode() {
        return path.hashCode() ^ 1234321;
    }

    @Override
    public String toString() {
        return path;
    }

    private static final int S_IFMT = 0170000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFREG = 0100000;

    /** stat(2)'s st_mode, or -1 if the path cannot be stat'ed. */
    private static native int mode(String path);

    private static native String[] listNames(String path);
}
