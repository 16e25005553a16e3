package com.example.shop;

import com.example.shop.model.Item;
import java.util.ArrayList;
import java.util.List;

/** Overloads that ProGuard renames to one short name. */
public class Cart {
    private final List<Item> lines = new ArrayList<>();
    private final List<Integer> counts = new ArrayList<>();

    public void add(Item item) {
        add(item, 1);
    }

    public void add(Item item, int count) {
        lines.add(item);
        counts.add(count);
    }

    public void add(String name, long price) {
        add(new Item(name, price));
    }

    public void add(Item[] items) {
        for (Item item : items) {
            if (item != null) {
                add(item);
            }
        }
    }

    public long total() {
        return total(false);
    }

    public long total(boolean rounded) {
        long sum = 0;
        for (int i = 0; i < lines.size(); i++) {
            sum += lines.get(i).price() * counts.get(i);
        }
        return rounded ? (sum / 100) * 100 : sum;
    }

    public int count() {
        return lines.size();
    }

    public Item first() {
        return lines.get(0);
    }

    public List<Item> lines() {
        return lines;
    }
}
