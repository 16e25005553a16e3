/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * Virtual and interface dispatch: a class hierarchy with abstract classes, overriding and super
 * calls (over several levels), interfaces with default and static methods (and a default that a
 * class and a sub-interface override), Iface.super calls, private and static methods that are
 * not dispatched, overloads chosen at compile time, field hiding, and call sites that see one,
 * two and many receiver classes (monomorphic, polymorphic and megamorphic inline caches once the
 * JIT compiles them) made hot enough to be compiled in --mode jit.
 */
public class Dispatch {
    interface Named {
        String name();

        default String describe() {
            return "Named(" + name() + ")";
        }

        static String join(Named a, Named b) {
            return a.name() + "+" + b.name();
        }
    }

    interface Sized {
        int size();

        default String describe() {
            return "Sized(" + size() + ")";
        }
    }

    interface Loud extends Named {
        default String describe() {
            return "LOUD " + Named.super.describe();
        }
    }

    abstract static class Animal implements Named {
        String kind = "animal";

        abstract String sound();

        public String name() {
            return "animal";
        }

        String speak() {
            return name() + " says " + sound();
        }

        private String secret() {
            return "animal-secret";
        }

        String callSecret() {
            return secret();
        }

        static String stat() {
            return "Animal.stat";
        }

        public String toString() {
            return "Animal[" + name() + "]";
        }
    }

    static class Dog extends Animal {
        String kind = "dog";

        String sound() {
            return "woof";
        }

        public String name() {
            return "dog";
        }

        private String secret() {
            return "dog-secret";
        }

        static String stat() {
            return "Dog.stat";
        }
    }

    static class Puppy extends Dog implements Loud, Sized {
        String sound() {
            return "yip (not " + super.sound() + ")";
        }

        public String name() {
            return "puppy/" + super.name();
        }

        public int size() {
            return 2;
        }

        // Both Loud and Sized have a default describe(): the class must choose.
        public String describe() {
            return Loud.super.describe() + " & " + Sized.super.describe();
        }
    }

    static class Cat extends Animal implements Sized {
        String sound() {
            return "meow";
        }

        public int size() {
            return 4;
        }

        // Named and Sized both have a default describe(): pick Sized's.
        public String describe() {
            return Sized.super.describe();
        }

        String speak() {
            return "the cat: " + super.speak();
        }
    }

    static final class Fish extends Animal {
        String sound() {
            return "...";
        }
    }

    static class Bird extends Animal {
        String sound() {
            return "tweet";
        }

        public String name() {
            return "bird";
        }
    }

    static class Parrot extends Bird {
        String sound() {
            return "hello";
        }
    }

    static class Crow extends Bird {
        String sound() {
            return "caw";
        }
    }

    static String over(Object o) {
        return "Object";
    }

    static String over(String s) {
        return "String";
    }

    static String over(Animal a) {
        return "Animal";
    }

    static String over(Dog d) {
        return "Dog";
    }

    static String over(long l) {
        return "long";
    }

    static String over(Integer i) {
        return "Integer";
    }

    static int virtualSite(Animal a) {
        return a.sound().length();
    }

    static int interfaceSite(Named n) {
        return n.name().length();
    }

    static int defaultSite(Named n) {
        return n.describe().length();
    }

    public static void main(String[] args) {
        Animal[] zoo = {new Dog(), new Puppy(), new Cat(), new Fish(), new Bird(), new Parrot(),
            new Crow()};
        for (Animal a : zoo) {
            System.out.println(a.getClass().getSimpleName() + ": " + a.speak() + " | " + a.describe()
                    + " | " + a + " | " + a.callSecret() + " | kind " + a.kind
                    + " | Sized " + (a instanceof Sized ? ((Sized) a).size() : -1)
                    + " | Loud " + (a instanceof Loud));
        }
        Dog d = new Puppy();
        Animal asAnimal = d;
        System.out.println("fields " + d.kind + " " + asAnimal.kind + " " + ((Dog) asAnimal).kind);
        System.out.println("static " + Animal.stat() + " " + Dog.stat() + " "
                + Named.join(zoo[0], zoo[2]));
        Object o = "str";
        Animal pup = new Puppy();
        System.out.println("overloads " + over(o) + " " + over("s") + " " + over(pup) + " "
                + over(d) + " " + over(3) + " " + over(Integer.valueOf(3)) + " " + over((Object) d)
                + " " + over('c'));
        System.out.println("super chain " + new Puppy().sound() + " | " + new Cat().speak());
        System.out.println("equals/hashCode " + zoo[0].equals(zoo[0]) + " " + zoo[0].equals(zoo[1])
                + " " + (zoo[0].hashCode() == zoo[0].hashCode()) + " "
                + Named.class.isInstance(zoo[3]) + " " + Sized.class.isAssignableFrom(Puppy.class)
                + " " + Loud.class.isAssignableFrom(Dog.class) + " "
                + Animal.class.isAssignableFrom(Parrot.class) + " " + Puppy.class.getSuperclass()
                + " " + Puppy.class.getInterfaces().length);

        // Hot call sites: monomorphic, polymorphic (2 classes), megamorphic (7 classes).
        long mono = 0, poly = 0, mega = 0, iface = 0, defaults = 0;
        Animal[] two = {zoo[0], zoo[2]};
        for (int i = 0; i < 200000; i++) {
            mono += virtualSite(zoo[4]);
            poly += virtualSite(two[i & 1]);
            mega += virtualSite(zoo[i % zoo.length]);
            iface += interfaceSite(zoo[i % zoo.length]);
            defaults += defaultSite(zoo[i % 3]);
        }
        System.out.println("hot " + mono + " " + poly + " " + mega + " " + iface + " " + defaults);
    }
}
