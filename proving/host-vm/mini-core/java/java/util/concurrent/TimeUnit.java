/*
 * Copyright (C) 2026 Hubble for AOSP
 * Licensed under the Apache License, Version 2.0.
 */
package java.util.concurrent;

/** Units of time, each a number of nanoseconds; conversions truncate and saturate. */
public enum TimeUnit {
    NANOSECONDS(1L),
    MICROSECONDS(1000L),
    MILLISECONDS(1000000L),
    SECONDS(1000000000L),
    MINUTES(60000000000L),
    HOURS(3600000000000L),
    DAYS(86400000000000L);

    private final long nanos;

    TimeUnit(long nanos) {
        this.nanos = nanos;
    }

    /** D units of SOURCE in this unit. */
    public long convert(long d, TimeUnit source) {
        if (source.nanos == nanos) {
            return d;
        }
        if (source.nanos > nanos) {
            long f = source.nanos / nanos;
            long max = Long.MAX_VALUE / f;
            return d > max ? Long.MAX_VALUE : d < -max ? Long.MIN_VALUE : d * f;
        }
        return d / (nanos / source.nanos);
    }

    public long toNanos(long d) {
        return NANOSECONDS.convert(d, this);
    }

    public long toMicros(long d) {
        return MICROSECONDS.convert(d, this);
    }

    public long toMillis(long d) {
        return MILLISECONDS.convert(d, this);
    }

    public long toSeconds(long d) {
        return SECONDS.convert(d, this);
    }

    public long toMinutes(long d) {
        return MINUTES.convert(d, this);
    }

    public long toHours(long d) {
        return HOURS.convert(d, this);
    }

    public long toDays(long d) {
        return DAYS.convert(d, this);
    }

    public void sleep(long d) throws InterruptedException {
        if (d > 0) {
            long ns = toNanos(d);
            Thread.sleep(ns / 1000000, (int) (ns % 1000000));
        }
    }

    public void timedJoin(Thread t, long d) throws InterruptedException {
        if (d > 0) {
            t.join(Math.max(1, toMillis(d)));
        }
    }
}
