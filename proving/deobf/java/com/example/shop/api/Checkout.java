package com.example.shop.api;

import com.example.shop.Cart;
import com.example.shop.Pricing;
import com.example.shop.model.Item;

/** Kept with its members (a public API): its name stays, its signatures name obfuscated types. */
public class Checkout {
    private final Pricing pricing;
    private int registered;

    public Checkout(Pricing pricing) {
        this.pricing = pricing;
    }

    public void register(Cart cart) {
        registered += cart.count();
    }

    public long pay(Cart cart) {
        long sum = 0;
        for (Item item : cart.lines()) {
            sum += pricing.price(item, 1);
        }
        return sum + registered;
    }
}
