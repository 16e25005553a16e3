/*
 * Hubble (OSDI '22) §8.1, Listing 1: the method whose cost per call measures one entry and one
 * exit trace point. Kept exactly as printed (the method name included): the tail recursion keeps
 * the JIT from inlining it, a depth of 10 defeats inlining at lower depths, and `sum` is carried
 * across calls so the loop is not removed as dead code.
 */
package dev.hubble.bench;

public final class Listing1 {
    public long Test(int depth, int work, long sum) {
        for (int i = 0; i < work; i++) {
            sum *= i - 1; sum /= i + 2;
        }
        if (depth > 1) return Test(depth - 1, work, sum);
        return sum;
    }
}
