/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util;

/** The parts of List that follow from get/size/add/remove. */
public abstract class AbstractList<E> implements List<E> {
    protected AbstractList() {
    }

    public boolean isEmpty() {
        return size() == 0;
    }

    public boolean contains(Object o) {
        return indexOf(o) >= 0;
    }

    public int indexOf(Object o) {
        for (int i = 0; i < size(); i++) {
            Object e = get(i);
            if (o == null ? e == null : o.equals(e)) {
                return i;
            }
        }
        return -1;
    }

    public boolean add(E e) {
        add(size(), e);
        return true;
    }

    public void add(int index, E e) {
        throw new UnsupportedOperationException();
    }

    public E set(int index, E e) {
        throw new UnsupportedOperationException();
    }

    public E remove(int index) {
        throw new UnsupportedOperationException();
    }

    public boolean remove(Object o) {
        int i = indexOf(o);
        if (i < 0) {
            return false;
        }
        remove(i);
        return true;
    }

    public void clear() {
        while (size() > 0) {
            remove(size() - 1);
        }
    }

    public Object[] toArray() {
        Object[] out = new Object[size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = get(i);
        }
        return out;
    }

    public Iterator<E> iterator() {
        return new Itr();
    }

    private class Itr implements Iterator<E> {
        private int next;
        private int last = -1;

        Itr() {
        }

        public boolean hasNext() {
            return next < size();
        }

        public E next() {
            if (next >= size()) {
                throw new NoSuchElementException();
            }
            last = next;
            return get(next++);
        }

        public void remove() {
            if (last < 0) {
                throw new IllegalStateException();
            }
            AbstractList.this.remove(last);
            next = last;
            last = -1;
        }
    }

    public boolean equals(Object o) {
        if (o == this) {
            return true;
        }
        if (!(o instanceof List)) {
            return false;
        }
        List<?> other = (List<?>) o;
        if (other.size() != size()) {
            return false;
        }
        for (int i = 0; i < size(); i++) {
            Object a = get(i);
            Object b = other.get(i);
            if (a == null ? b != null : !a.equals(b)) {
                return false;
            }
        }
        return true;
    }

    public int hashCode() {
        int h = 1;
        for (int i = 0; i < size(); i++) {
            Object e = get(i);
            h = 31 * h + (e == null ? 0 : e.hashCode());
        }
        return h;
    }

    public String toString() {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < size(); i++) {
            if (i > 0) {
                sb.append(", ");
            }
            Object e = get(i);
            sb.append(e == this ? "(this Collection)" : String.valueOf(e));
        }
        return sb.append(']').toString();
    }
}
