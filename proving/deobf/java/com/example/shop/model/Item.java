package com.example.shop.model;

/** A value class in another package. */
public class Item {
    private final String name;
    private final long price;

    public Item(String name, long price) {
        this.name = name;
        this.price = price;
    }

    public String name() {
        return name;
    }

    public long price() {
        return price;
    }
}
