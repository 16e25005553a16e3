/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.lang;

import dalvik.annotation.optimization.FastNative;
import dalvik.system.ClassExt;
import dalvik.system.VMStack;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * A class, interface, array type or primitive type, as ART's mirror::Class sees it.
 *
 * ART allocates java.lang.Class pre-sized (mirror::Class::ClassClassSize): its vtable and its
 * static fields (four 32-bit, one 64-bit) must have exactly the sizes that formula assumes; gen.py
 * pads the vtable with final no-op methods when the methods below fall short, and checks the
 * rest. The instance fields are mirror::Class's members, which ART fills in itself.
 */
public final class Class<T> implements java.io.Serializable {
    private static final long serialVersionUID = 0x6d696e69636f7265L;

    private static final int SYNTHETIC = 0x1000;
    private static final int ANNOTATION = 0x2000;
    private static final int ENUM = 0x4000;
    private static final int FINALIZABLE = 0x80000000;

    // mirror::Class (class_linker_test.cc ClassOffsets); ART writes them all.
    private transient ClassLoader classLoader;
    private transient Class<?> componentType;
    private transient DexCache dexCache;
    private transient ClassExt extData;
    private transient Object[] ifTable;
    private transient String name;
    private transient Class<?> superClass;
    private transient Object vtable;
    private transient long iFields;
    private transient long methods;
    private transient long sFields;
    private transient int accessFlags;
    private transient int classFlags;
    private transient int classSize;
    private transient int clinitThreadId;
    private transient int dexClassDefIndex;
    private transient volatile int dexTypeIndex;
    private transient int numReferenceInstanceFields;
    private transient int numReferenceStaticFields;
    private transient int objectSize;
    private transient int objectSizeAllocFastPath;
    private transient int primitiveType;
    private transient int referenceInstanceOffsets;
    private transient int status;
    private transient short copiedMethodsOffset;
    private transient short virtualMethodsOffset;

    private Class() {
    }

    public static Class<?> forName(String className) throws ClassNotFoundException {
        return forName(className, true, VMStack.getCallingClassLoader());
    }

    public static Class<?> forName(String className, boolean initialize, ClassLoader loader)
            throws ClassNotFoundException {
        return classForName(className, initialize, loader);
    }

    public String getName() {
        String n = name;
        if (n == null) {
            n = getNameNative();
            name = n;
        }
        return n;
    }

    public String getTypeName() {
        if (isArray()) {
            return componentType.getTypeName() + "[]";
        }
        return getName();
    }

    public String getSimpleName() {
        if (isArray()) {
            return componentType.getSimpleName() + "[]";
        }
        if (isAnonymousClass()) {
            return "";
        }
        String inner = getInnerClassName();
        if (inner != null) {
            return inner;
        }
        String n = getName();
        return n.substring(n.lastIndexOf('.') + 1);
    }

    public String getPackageName() {
        Class<?> c = this;
        while (c.isArray()) {
            c = c.componentType;
        }
        if (c.isPrimitive()) {
            return "java.lang";
        }
        String n = c.getName();
        int dot = n.lastIndexOf('.');
        return dot < 0 ? "" : n.substring(0, dot);
    }

    public String toString() {
        if (isPrimitive()) {
            return getName();
        }
        return (isInterface() ? "interface " : "class ") + getName();
    }

    public Class<? super T> getSuperclass() {
        if (isInterface()) {
            return null;
        }
        @SuppressWarnings("unchecked")
        Class<? super T> s = (Class<? super T>) superClass;
        return s;
    }

    public Class<?> getComponentType() {
        return componentType;
    }

    public boolean isArray() {
        return componentType != null;
    }

    public boolean isPrimitive() {
        return (primitiveType & 0xffff) != 0;
    }

    public boolean isInterface() {
        return (accessFlags & 0x0200) != 0;
    }

    public boolean isAnnotation() {
        return (accessFlags & ANNOTATION) != 0;
    }

    public boolean isEnum() {
        return (accessFlags & ENUM) != 0 && superClass != null && superClass.getName().equals("java.lang.Enum");
    }

    public boolean isSynthetic() {
        return (accessFlags & SYNTHETIC) != 0;
    }

    public boolean isFinalizable() {
        return (accessFlags & FINALIZABLE) != 0;
    }

    public boolean isMemberClass() {
        return getDeclaringClass() != null;
    }

    public boolean isLocalClass() {
        return getEnclosingClass() != null && getDeclaringClass() == null && !isAnonymousClass();
    }

    public int getModifiers() {
        if (isArray()) {
            int component = componentType.getModifiers();
            if ((component & 0x0200) != 0) {
                component &= ~(0x0200 | 0x0008);
            }
            return 0x0400 | 0x0010 | component;
        }
        int flags = accessFlags & 0xffff;
        int inner = getInnerClassFlags(-1);
        if (inner != -1) {
            flags = inner & 0xffff;
        }
        return flags & ~0x0020;
    }

    public ClassLoader getClassLoader() {
        if (isPrimitive()) {
            return null;
        }
        return classLoader;
    }

    public boolean isInstance(Object object) {
        return object != null && isAssignableFrom(object.getClass());
    }

    public boolean isAssignableFrom(Class<?> other) {
        if (this == other) {
            return true;
        }
        if (other == null) {
            throw new NullPointerException("other == null");
        }
        if (isPrimitive() || other.isPrimitive()) {
            return false;
        }
        if (getName().equals("java.lang.Object")) {
            return !other.isPrimitive();
        }
        if (isArray()) {
            return other.isArray() && componentType.isAssignableFrom(other.componentType);
        }
        if (isInterface()) {
            Object[] table = other.ifTable;
            if (table != null) {
                for (int i = 0; i < table.length; i += 2) {
                    if (table[i] == this) {
                        return true;
                    }
                }
            }
            return false;
        }
        if (!other.isInterface()) {
            for (Class<?> c = other.superClass; c != null; c = c.superClass) {
                if (c == this) {
                    return true;
                }
            }
        }
        return false;
    }

    @SuppressWarnings("unchecked")
    public T cast(Object object) {
        if (object != null && !isInstance(object)) {
            throw new ClassCastException("Cannot cast " + object.getClass().getName() + " to "
                    + getName());
        }
        return (T) object;
    }

    public Class<?>[] getInterfaces() {
        if (isArray()) {
            return new Class<?>[] { Cloneable.class, java.io.Serializable.class };
        }
        Class<?>[] ifaces = getInterfacesInternal();
        return ifaces == null ? new Class<?>[0] : ifaces;
    }

    @FastNative
    public native Field[] getDeclaredFields();

    public Method[] getDeclaredMethods() {
        return getDeclaredMethodsUnchecked(false);
    }

    public Constructor<?>[] getDeclaredConstructors() {
        return getDeclaredConstructorsInternal(false);
    }

    public boolean desiredAssertionStatus() {
        return false;
    }

    @FastNative
    public native T newInstance() throws InstantiationException, IllegalAccessException;

    @FastNative
    public native boolean isAnonymousClass();

    @FastNative
    public native Class<?> getDeclaringClass();

    @FastNative
    public native Class<?> getEnclosingClass();

    // ---- member lookup (run-tests): thin layers over ART's reflection natives

    /** The declared method NAME(PARAMS), public or not; not inherited ones. */
    public Method getDeclaredMethod(String name, Class<?>... params) throws NoSuchMethodException {
        Method m = getDeclaredMethodInternal(name, params == null ? new Class<?>[0] : params);
        if (m == null) {
            throw new NoSuchMethodException(describeMember(name, params));
        }
        return m;
    }

    /** The public method NAME(PARAMS) of this class, its superclasses, then its interfaces. */
    public Method getMethod(String name, Class<?>... params) throws NoSuchMethodException {
        Class<?>[] p = params == null ? new Class<?>[0] : params;
        for (Class<?> c = this; c != null; c = c.getSuperclass()) {
            Method m = c.getDeclaredMethodInternal(name, p);
            if (m != null && (m.getModifiers() & 0x0001) != 0) {
                return m;
            }
        }
        Method m = findPublicInterfaceMethod(this, name, p);
        if (m == null) {
            throw new NoSuchMethodException(describeMember(name, params));
        }
        return m;
    }

    private static Method findPublicInterfaceMethod(Class<?> c, String name, Class<?>[] p) {
        for (; c != null; c = c.getSuperclass()) {
            for (Class<?> i : c.getInterfaces()) {
                Method m = i.getDeclaredMethodInternal(name, p);
                if (m != null && (m.getModifiers() & 0x0001) != 0) {
                    return m;
                }
                m = findPublicInterfaceMethod(i, name, p);
                if (m != null) {
                    return m;
                }
            }
        }
        return null;
    }

    public Constructor<T> getDeclaredConstructor(Class<?>... params) throws NoSuchMethodException {
        @SuppressWarnings("unchecked")
        Constructor<T> c = (Constructor<T>) getDeclaredConstructorInternal(
                params == null ? new Class<?>[0] : params);
        if (c == null) {
            throw new NoSuchMethodException(describeMember("<init>", params));
        }
        return c;
    }

    public Constructor<T> getConstructor(Class<?>... params) throws NoSuchMethodException {
        Constructor<T> c = getDeclaredConstructor(params);
        if ((c.getModifiers() & 0x0001) == 0) {
            throw new NoSuchMethodException(describeMember("<init>", params));
        }
        return c;
    }

    /** The declared field NAME (ART throws NoSuchFieldException). */
    @FastNative
    public native Field getDeclaredField(String name) throws NoSuchFieldException;

    /** The public field NAME of this class, its interfaces or superclasses. */
    public Field getField(String name) throws NoSuchFieldException {
        if (name == null) {
            throw new NullPointerException("name == null");
        }
        Field f = getPublicFieldRecursive(name);
        if (f == null) {
            throw new NoSuchFieldException(name);
        }
        return f;
    }

    /** An enum class's constants, in order (a new array each time), or null for another class. */
    @SuppressWarnings("unchecked")
    public T[] getEnumConstants() {
        if (!isEnum()) {
            return null;
        }
        try {
            Method values = getDeclaredMethod("values");
            values.setAccessible(true);
            return (T[]) values.invoke(null);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    private String describeMember(String name, Class<?>[] params) {
        StringBuilder sb = new StringBuilder(getName()).append('.').append(name).append(" [");
        if (params != null) {
            for (int i = 0; i < params.length; i++) {
                if (i > 0) {
                    sb.append(", ");
                }
                sb.append(params[i]);
            }
        }
        return sb.append(']').toString();
    }

    // @generated-members
}
