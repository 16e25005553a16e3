package com.example.shop;

import com.example.shop.model.Item;

public class DiscountPricing implements Pricing {
    private final int percent;

    public DiscountPricing(int percent) {
        this.percent = percent;
    }

    @Override
    public long price(Item item, int count) {
        return item.price() * count * (100 - percent) / 100;
    }

    public long price(Item item) {
        return price(item, 1);
    }
}
