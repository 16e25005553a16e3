/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/** The host VM's first program: ART, booted imageless on mini-core, prints. */
public class Hello {
    public static void main(String[] args) {
        System.out.println("Hello, world!");
        System.out.println("int " + 42 + ", long " + (1L << 40) + ", char " + 'x'
                + ", boolean " + (args.length == 0));
        Object o = new Object();
        System.out.println(o.getClass().getName() + " " + (o.hashCode() == System.identityHashCode(o)));
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            sb.append(i).append(i < 4 ? "," : "");
        }
        System.out.println(sb);
        System.out.println(Thread.currentThread().getName() + " in "
                + Thread.currentThread().getThreadGroup().getName());
    }
}
