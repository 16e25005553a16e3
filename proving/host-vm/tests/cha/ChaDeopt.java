/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

/**
 * Deoptimization by class hierarchy analysis (CHA). While Base.value() and Shape.sides() each
 * have a single implementation, the JIT (--mode jit) compiles their hot callers with the call
 * devirtualized and inlined behind a CHA guard. Loading a subclass that overrides them then
 * invalidates that code (ART logs "CHA invalidated compiled code for ..." with -verbose:class:
 * expected-log-jit.txt), also for a compiled frame that is on the stack when the subclasses are
 * loaded (onStack: its loop calls swap(), whose first call to Makers loads Sub, Sub2 and Square;
 * onStack must deoptimize on return and call Sub2.value() from then on). The calls must
 * then reach the overrides, in every mode. The warm-up lasts at least 1.5 s so that the JIT has
 * compiled the callers (optimized, with the inlining) before the subclasses are loaded (by
 * Makers: see there).
 */
public class ChaDeopt {
    static class Base {
        int value() {
            return 1;
        }
    }

    static class Sub extends Base {
        int value() {
            return 20;
        }
    }

    static class Sub2 extends Base {
        int value() {
            return 300;
        }
    }

    abstract static class Shape {
        abstract int sides();
    }

    static class Triangle extends Shape {
        int sides() {
            return 3;
        }
    }

    static class Square extends Shape {
        int sides() {
            return 4;
        }
    }

    static Base current = new Base();

    static int sumValues(Base b, int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += b.value();
        }
        return s;
    }

    static int onStack(int n, int swapAt) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            if (i == swapAt) {
                swap();
            }
            s += current.value();
        }
        return s;
    }

    static void swap() {
        current = Makers.sub2();
    }

    static int sides(Shape s) {
        return s.sides() * 10 + 1;
    }

    /**
     * The only code that names the subclasses: ART's verifier loads the classes a method names
     * when it verifies the method's class, which for ChaDeopt is before main; Makers is verified
     * (and Sub, Sub2, Square loaded) only when its first method is called.
     */
    static final class Makers {
        static Base sub() {
            return new Sub();
        }

        static Base sub2() {
            return new Sub2();
        }

        static Shape square() {
            return new Square();
        }
    }

    public static void main(String[] args) {
        Base base = new Base();
        Shape tri = new Triangle();
        long warm = 0;
        long start = System.nanoTime();
        int calls = 0;
        // Long enough for the JIT's optimized compilation (the one that devirtualizes by CHA;
        // the baseline compilation before it uses inline caches) on a loaded 2-core machine:
        // 1.5 s once left sides() with baseline code only, and nothing to invalidate.
        while (calls < 60000 || System.nanoTime() - start < 3000000000L) {
            warm += sumValues(base, 10) + onStack(10, -1) + sides(tri);
            calls++;
        }
        System.out.println("warm-up " + (warm / calls) + " per round");

        // Sub2 is loaded by swap(), called from onStack's loop: onStack's compiled frame (and
        // sumValues's code) assumed Base.value() had one implementation.
        System.out.println("onStack " + onStack(1000, 500) + " (500 * 1 + 500 * 300 = 150500)");
        System.out.println("current is " + current.getClass().getName());
        Base sub = Makers.sub();
        System.out.println("sumValues base " + sumValues(base, 10) + " sub " + sumValues(sub, 10)
                + " sub2 " + sumValues(current, 10));
        Shape sq = Makers.square();
        System.out.println("sides triangle " + sides(tri) + " square " + sides(sq));

        // Hot again, now over three (and two) classes: compiled again without the assumption.
        long total = 0;
        Base[] all = {base, sub, current};
        Shape[] shapes = {tri, sq};
        for (int i = 0; i < 60000; i++) {
            total += sumValues(all[i % 3], 3) + sides(shapes[i & 1]);
        }
        System.out.println("after " + total);
    }
}
