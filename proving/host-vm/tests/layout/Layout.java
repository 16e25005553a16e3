/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import java.lang.reflect.Field;

/**
 * The mirror layouts as the running VM linked them. For each class named on the command line
 * (the driver passes those of ART's CheckOffsets, runtime/class_linker_test.cc), every declared
 * instance field with the offset ART gave it, by name (the order CheckOffsets lists them in, and
 * LinkFields' within one kind), then the object size rounded up to 4, as CheckOffsets::Check
 * compares it with sizeof (not for Class and String, which it does not size either). The driver
 * expects exactly what ART's C++ headers say, compiled (host-vm-build's mirror-offsets).
 */
public class Layout {
    public static void main(String[] args) throws Exception {
        // mirror::Class::object_size_, read as any reflective caller would; its own offset is
        // among the checked ones.
        Field objectSize = Class.class.getDeclaredField("objectSize");
        objectSize.setAccessible(true);
        for (String name : args) {
            // The boot loader, not initialized: linking alone lays the fields out.
            Class<?> c = Class.forName(name, false, null);
            Field[] declared = c.getDeclaredFields();
            Field[] fields = new Field[declared.length];
            int n = 0;
            for (Field f : declared) {
                if ((f.getModifiers() & 0x8) == 0) {   // not static
                    int i = n++;
                    while (i > 0 && fields[i - 1].getName().compareTo(f.getName()) > 0) {
                        fields[i] = fields[i - 1];
                        i--;
                    }
                    fields[i] = f;
                }
            }
            for (int i = 0; i < n; i++) {
                System.out.println(name + " " + fields[i].getName() + " " + fields[i].getOffset());
            }
            if (!name.equals("java.lang.Class") && !name.equals("java.lang.String")) {
                System.out.println(name + " (size) " + ((objectSize.getInt(c) + 3) & ~3));
            }
        }
    }
}
