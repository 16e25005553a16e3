package com.example.shop;

import com.example.shop.model.Item;

/** Static overloads: with -overloadaggressively even different return types share a name. */
public final class Util {
    private Util() {}

    public static String fmt(long cents) {
        return (cents / 100) + "." + (cents % 100);
    }

    public static String fmt(int count) {
        return count + " item(s)";
    }

    public static String fmt(double value) {
        return String.valueOf(value);
    }

    public static String describe(Cart cart) {
        return "cart of " + cart.count();
    }

    public static String describe(Item item) {
        return item.name();
    }

    public static int sum(int[] values) {
        int s = 0;
        for (int v : values) {
            s += v;
        }
        return s;
    }

    public static long sum(long[] values) {
        long s = 0;
        for (long v : values) {
            s += v;
        }
        return s;
    }
}
