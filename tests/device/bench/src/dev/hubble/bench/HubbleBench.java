/*
 * The Listing-1 benchmark driver (Hubble §8.1). Plain java.* only, so the same class runs under
 * the host JVM (CI smoke test), dalvikvm on a device, and inside BenchInstrumentation.
 *
 * One measurement = `iterations` calls of Listing1.Test(depth, work, seed): iterations * depth
 * method calls, each with one entry and one exit trace point. Before measuring, the experiment is
 * repeated until the last three runs agree within 5% (the paper's "runtime stabilized to a
 * maximum variance of five percent"; at most --warmup-max runs), then measured --runs times.
 *
 * Tracing is switched with the Java-visible hook of docs/architecture.md around each measured run
 * (never inside it): Thread.currentThread().setName("HUBBLE:start") / ("HUBBLE:stop"). On a
 * baseline (unmodified) image the hook is an ordinary rename, so --image base forbids
 * --tracing on.
 *
 * Output, one line per measured run (tests/device/bench_table.py reads these):
 *   RESULT image=<hubble|base> tracing=<on|off> abi=<os.arch> work=W depth=D iterations=N run=I ns=T sum=S
 */
package dev.hubble.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

public final class HubbleBench {
    public String image = "hubble";
    public String tracing = "off";
    public int[] works = {0, 1, 10, 100, 1000};
    public int depth = 10;
    /** Iterations for work 0; work w runs iterations / (w + 1) (at least 1000) to bound run time. */
    public long iterations = 100_000_000L;
    public boolean fixedIterations = false;
    public int runs = 10;
    public int warmupMax = 30;
    public long seed = 7;

    private final Listing1 target = new Listing1();

    public static HubbleBench fromArgs(String[] args) {
        HubbleBench b = new HubbleBench();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = (i + 1 < args.length) ? args[i + 1] : null;
            if (v == null) throw new IllegalArgumentException("missing value after " + a);
            switch (a) {
                case "--image": b.image = v; break;
                case "--tracing": b.tracing = v; break;
                case "--work": b.works = parseInts(v); break;
                case "--depth": b.depth = Integer.parseInt(v); break;
                case "--iterations": b.iterations = Long.parseLong(v); b.fixedIterations = true; break;
                case "--runs": b.runs = Integer.parseInt(v); break;
                case "--warmup-max": b.warmupMax = Integer.parseInt(v); break;
                case "--seed": b.seed = Long.parseLong(v); break;
                default: throw new IllegalArgumentException("unknown argument " + a);
            }
            i++;
        }
        b.validate();
        return b;
    }

    static int[] parseInts(String csv) {
        String[] parts = csv.split(",");
        int[] out = new int[parts.length];
        for (int i = 0; i < parts.length; i++) out[i] = Integer.parseInt(parts[i].trim());
        return out;
    }

    void validate() {
        if (!image.equals("hubble") && !image.equals("base"))
            throw new IllegalArgumentException("--image must be hubble or base");
        if (!tracing.equals("on") && !tracing.equals("off"))
            throw new IllegalArgumentException("--tracing must be on or off");
        if (image.equals("base") && tracing.equals("on"))
            throw new IllegalArgumentException("a baseline image has no tracing: use --tracing off");
        if (depth < 1 || runs < 1 || iterations < 1 || warmupMax < 3)
            throw new IllegalArgumentException("depth, runs, iterations >= 1 and warmup-max >= 3");
        for (int w : works) if (w < 0) throw new IllegalArgumentException("work must be >= 0");
    }

    public long iterationsFor(int work) {
        if (fixedIterations) return iterations;
        return Math.max(1000L, iterations / (work + 1L));
    }

    /** One run: returns {elapsed ns, sum}. */
    long[] once(int work, long n) {
        long sum = 0;
        boolean on = tracing.equals("on");
        String name = Thread.currentThread().getName();
        if (on) Thread.currentThread().setName("HUBBLE:start");
        long t0 = System.nanoTime();
        for (long k = 0; k < n; k++) {
            sum += target.Test(depth, work, seed + k);
        }
        long t1 = System.nanoTime();
        if (on) Thread.currentThread().setName("HUBBLE:stop");
        if (!Thread.currentThread().getName().equals(name)) Thread.currentThread().setName(name);
        return new long[] {t1 - t0, sum};
    }

    static boolean stable(List<Long> times) {
        int n = times.size();
        if (n < 3) return false;
        long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE, total = 0;
        for (int i = n - 3; i < n; i++) {
            long t = times.get(i);
            lo = Math.min(lo, t); hi = Math.max(hi, t); total += t;
        }
        double mean = total / 3.0;
        return mean > 0 && (hi - lo) / mean <= 0.05;
    }

    public void run(PrintStream out) {
        String abi = System.getProperty("os.arch", "unknown");
        for (int work : works) {
            long n = iterationsFor(work);
            List<Long> warm = new ArrayList<>();
            while (warm.size() < warmupMax && !stable(warm)) warm.add(once(work, n)[0]);
            for (int r = 0; r < runs; r++) {
                long[] res = once(work, n);
                out.println("RESULT image=" + image + " tracing=" + tracing + " abi=" + abi
                        + " work=" + work + " depth=" + depth + " iterations=" + n
                        + " run=" + r + " ns=" + res[0] + " sum=" + res[1]);
            }
            out.println("WARMUP work=" + work + " runs=" + warm.size() + " stable=" + stable(warm));
        }
    }

    public static void main(String[] args) {
        HubbleBench b;
        try {
            b = fromArgs(args);
        } catch (IllegalArgumentException e) {
            System.err.println("HubbleBench: " + e.getMessage());
            System.err.println("usage: HubbleBench [--image hubble|base] [--tracing on|off] "
                    + "[--work 0,1,10,100,1000] [--depth 10] [--iterations N] [--runs 10] "
                    + "[--warmup-max 30] [--seed 7]");
            System.exit(2);
            return;
        }
        b.run(System.out);
    }
}
