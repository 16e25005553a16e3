package com.example.shop;

import com.example.shop.model.Item;

/** An interface: its method name is shared by its implementations. */
public interface Pricing {
    long price(Item item, int count);
}
