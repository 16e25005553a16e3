package com.example.shop;

import com.example.shop.api.Checkout;
import com.example.shop.model.Item;

/** Entry point (kept): exercises every class so that ProGuard keeps their methods. */
public class Main {
    public static void main(String[] args) {
        Inventory inventory = new Inventory(4);
        inventory.put(0, new Item("tea", 250));
        inventory.put(1, new Item("cake", 400));
        inventory.put(2, "jam", 300L);
        Cart cart = new Cart();
        cart.add(inventory.get(0));
        cart.add(inventory.get(1), 3);
        cart.add("spoon", 50L);
        cart.add(inventory.items());
        Pricing pricing = args.length > 0 ? new DiscountPricing(10) : new PlainPricing();
        Checkout checkout = new Checkout(pricing);
        checkout.register(cart);
        System.out.println(Util.fmt(checkout.pay(cart)));
        System.out.println(Util.fmt(cart.total(true)));
        System.out.println(Util.fmt((double) cart.total()));
        System.out.println(Util.fmt(cart.count()));
        System.out.println(inventory.grid().length + " " + Inventory.Slot.of(3).index());
        System.out.println(Util.describe(cart) + Util.describe(inventory.get(2)));
        System.out.println(cart.first().name() + cart.lines().size() + Util.sum(new long[] {1, 2}));
    }
}
