package com.example.shop;

import com.example.shop.model.Item;

public class PlainPricing implements Pricing {
    @Override
    public long price(Item item, int count) {
        return item.price() * count;
    }
}
