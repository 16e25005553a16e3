/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */

import dalvik.annotation.optimization.NeverInline;

/**
 * A UI loop whose frames take a few milliseconds, one of which (SLOW) takes 60 ms more: the
 * runtime's own duration trigger (debug.hubble.triggers Frames.doFrame>30ms=jank, as a device
 * sets android.view.Choreographer.doFrame>32ms) must see that frame end and flush, with nothing
 * told by the program. It prints the frame it made slow and waits for the flush.
 *
 *   Frames [FRAMES [SLOW]]
 */
public class Frames {
    static long sink;

    @NeverInline
    static long work(int i) {
        long s = 0;
        for (int k = 0; k < 5000; k++) {
            s += (k ^ i) & 7;
        }
        return s;
    }

    @NeverInline
    static void doFrame(int frame, int slow) throws InterruptedException {
        for (int i = 0; i < 20; i++) {
            sink += work(i);
        }
        if (frame == slow) {
            Thread.sleep(60);
        }
    }

    public static void main(String[] args) throws Exception {
        int frames = args.length > 0 ? Integer.parseInt(args[0]) : 12;
        int slow = args.length > 1 ? Integer.parseInt(args[1]) : 6;
        Thread.sleep(600); // the control thread starts tracing the UI thread as the app starts
        for (int f = 0; f < frames; f++) {
            doFrame(f, slow);
            Thread.sleep(16);
        }
        System.out.println("frames " + frames + " slow " + slow);
        System.out.println("ready");
        Thread.sleep(3000); // the trigger is read at the control thread's next tick
    }
}
