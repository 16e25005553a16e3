package com.example.shop;

import com.example.shop.model.Item;

/** Arrays of program types and a nested class. */
public class Inventory {
    private final Item[] slots;

    public Inventory(int size) {
        slots = new Item[size];
    }

    public void put(int index, Item item) {
        slots[index] = item;
    }

    public void put(int index, String name, long price) {
        put(index, new Item(name, price));
    }

    public Item get(int index) {
        return slots[index];
    }

    public Item[] items() {
        return slots.clone();
    }

    public Item[][] grid() {
        return new Item[][] {slots, slots};
    }

    /** A nested class: `Inventory$Slot`. */
    public static class Slot {
        private final int index;

        private Slot(int index) {
            this.index = index;
        }

        public static Slot of(int index) {
            return new Slot(index);
        }

        public int index() {
            return index;
        }
    }
}
