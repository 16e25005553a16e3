/*
 * What tracing costs on real ART: eight workloads, from call-heavy to compute-heavy, each timed
 * in this process after a warm-up (the JIT's steady state in --mode jit) and each printing a
 * checksum that every configuration must reproduce.
 *
 *   Bench WORKLOAD ROUNDS TRACER FD [FLUSH]
 *
 * TRACER: none (FD is then ignored), art-file, art-stream (ART's instrumentation tracing
 * through VMDebug, written at the stop or streamed), art-sample (ART's sampling, every 1 ms),
 * each to the inherited descriptor FD. ART's tracer starts after the warm-up and stops after
 * the timed rounds, as a user brackets the code they want to see. With FLUSH the main thread
 * then asks Hubble for a flush (Thread.setName("HUBBLE:flush:bench")).
 *
 * Prints: `result WORKLOAD checksum=C ns=N calls=K rounds=R` (C: what one round computes, the
 * same in every round, or the program fails; N: the R timed rounds; K: the Java calls of one
 * round, counted by construction, for the cost per trace point).
 */
public class Bench {
    // ---- fib: recursion, nothing but calls.
    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    static long fibRound(long[] calls) {
        calls[0] += 2L * fib(23 + 1) - 1; // fib(n) makes 2 fib(n+1) - 1 calls
        return fib(23);
    }

    // ---- dispatch: virtual and interface calls through three receivers.
    interface Shape {
        int area(int k);
    }

    abstract static class Base implements Shape {
        abstract int sides();
    }

    static final class Sq extends Base {
        int sides() { return 4; }
        public int area(int k) { return k * k; }
    }

    static final class Tri extends Base {
        int sides() { return 3; }
        public int area(int k) { return k * k / 2; }
    }

    static final class Hex extends Base {
        int sides() { return 6; }
        public int area(int k) { return 3 * k * k; }
    }

    static final Base[] SHAPES = {new Sq(), new Tri(), new Hex()};

    static long dispatchRound(long[] calls) {
        long sum = 0;
        for (int i = 0; i < 100000; i++) {
            Base b = SHAPES[i % 3];
            Shape s = b;
            sum += b.sides() + s.area(i & 63);
        }
        calls[0] += 200000;
        return sum;
    }

    // ---- tree: small methods on objects (a binary search tree).
    static final class Node {
        final int key;
        Node left;
        Node right;

        Node(int key) { this.key = key; }

        int compare(int k) { return k < key ? -1 : (k == key ? 0 : 1); }

        Node insert(int k, long[] calls) {
            calls[0]++;
            int c = compare(k);
            calls[0]++;
            if (c < 0) {
                if (left == null) { left = new Node(k); calls[0]++; } else { left.insert(k, calls); }
            } else if (c > 0) {
                if (right == null) { right = new Node(k); calls[0]++; } else { right.insert(k, calls); }
            }
            return this;
        }

        boolean contains(int k, long[] calls) {
            calls[0] += 2;
            int c = compare(k);
            if (c == 0) {
                return true;
            }
            Node next = c < 0 ? left : right;
            return next != null && next.contains(k, calls);
        }
    }

    static long treeRound(long[] calls) {
        int seed = 12345;
        Node root = new Node(0x40000000);
        calls[0]++;
        for (int i = 0; i < 4000; i++) {
            seed = seed * 1103515245 + 12345;
            root.insert((seed >>> 1) & 0x7fffffff, calls);
        }
        long found = 0;
        seed = 12345;
        for (int i = 0; i < 8000; i++) {
            seed = seed * 1103515245 + 12345;
            if (root.contains((seed >>> 1) & 0x7fffffff, calls)) {
                found++;
            }
        }
        return found;
    }

    // ---- exceptions: thrown three frames down, caught, every eighth call.
    static final class Oops extends RuntimeException {
        final int code;

        Oops(int code) { this.code = code; }
    }

    static int level3(int i) {
        if ((i & 7) == 0) {
            throw new Oops(i);
        }
        return i;
    }

    static int level2(int i) { return level3(i) + 1; }

    static int level1(int i) { return level2(i) + 1; }

    static long exceptionsRound(long[] calls) {
        long sum = 0;
        for (int i = 0; i < 20000; i++) {
            try {
                sum += level1(i);
            } catch (Oops e) {
                sum += e.code;
                calls[0]++; // the exception's constructor
            }
            calls[0] += 3;
        }
        return sum;
    }

    // ---- sieve: a loop over an array, almost no calls.
    static long sieveRound(long[] calls) {
        int n = 200000;
        boolean[] composite = new boolean[n + 1];
        long count = 0;
        for (int i = 2; i <= n; i++) {
            if (!composite[i]) {
                count += i;
                for (long j = (long) i * i; j <= n; j += i) {
                    composite[(int) j] = true;
                }
            }
        }
        return count;
    }

    // ---- strings: StringBuilder appends and reads (library calls into mini-core).
    static long stringsRound(long[] calls) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            sb.append(i).append(',');
        }
        String s = sb.toString();
        long sum = s.length();
        for (int i = 0; i < s.length(); i += 7) {
            sum += s.charAt(i);
        }
        calls[0] += 2; // the Java calls counted here are this method's own; mini-core's are extra
        return sum;
    }

    // ---- producer/consumer: two producers, two consumers, a bounded buffer with monitors.
    static final class Buffer {
        private final int[] items = new int[16];
        private int head;
        private int count;

        synchronized void put(int v) throws InterruptedException {
            while (count == items.length) {
                wait();
            }
            items[(head + count) % items.length] = v;
            count++;
            notifyAll();
        }

        synchronized int take() throws InterruptedException {
            while (count == 0) {
                wait();
            }
            int v = items[head];
            head = (head + 1) % items.length;
            count--;
            notifyAll();
            return v;
        }
    }

    static long prodconsRound(long[] calls) throws InterruptedException {
        final Buffer buffer = new Buffer();
        final int perProducer = 5000;
        final long[] sums = new long[2];
        final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(4);
        Thread[] threads = new Thread[4];
        for (int p = 0; p < 2; p++) {
            final int base = p * perProducer;
            threads[p] = new Thread(new Runnable() {
                public void run() {
                    try {
                        for (int i = 0; i < perProducer; i++) {
                            buffer.put(base + i);
                        }
                        done.countDown();
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            });
        }
        for (int c = 0; c < 2; c++) {
            final int me = c;
            threads[2 + c] = new Thread(new Runnable() {
                public void run() {
                    try {
                        long s = 0;
                        for (int i = 0; i < perProducer; i++) {
                            s += buffer.take();
                        }
                        sums[me] = s;
                        done.countDown();
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
            });
        }
        for (Thread t : threads) {
            t.start();
        }
        done.await();
        calls[0] += 4L * perProducer;
        return sums[0] + sums[1];
    }

    // ---- mix: an "app-like" blend: parse, model objects, a list, formatting.
    static final class Item {
        final String name;
        final int price;
        final int qty;

        Item(String name, int price, int qty) { this.name = name; this.price = price; this.qty = qty; }

        int total() { return price * qty; }

        boolean expensive() { return price > 500; }
    }

    static int parse(String s, int from, int to) {
        int v = 0;
        for (int i = from; i < to; i++) {
            v = v * 10 + (s.charAt(i) - '0');
        }
        return v;
    }

    static long mixRound(long[] calls) {
        java.util.ArrayList<Item> items = new java.util.ArrayList<Item>();
        for (int i = 0; i < 2000; i++) {
            String line = "item" + i + ":" + (i * 37 % 1000) + ":" + (i % 9 + 1);
            int a = line.indexOf(':');
            int b = line.indexOf(':', a + 1);
            items.add(new Item(line.substring(0, a), parse(line, a + 1, b), parse(line, b + 1, line.length())));
            calls[0] += 3;
        }
        long total = 0;
        int expensive = 0;
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            total += it.total();
            if (it.expensive()) {
                expensive++;
            }
            calls[0] += 2;
        }
        return total * 31 + expensive;
    }

    static long round(String workload, long[] calls) throws InterruptedException {
        if (workload.equals("fib")) return fibRound(calls);
        if (workload.equals("dispatch")) return dispatchRound(calls);
        if (workload.equals("tree")) return treeRound(calls);
        if (workload.equals("exceptions")) return exceptionsRound(calls);
        if (workload.equals("sieve")) return sieveRound(calls);
        if (workload.equals("strings")) return stringsRound(calls);
        if (workload.equals("prodcons")) return prodconsRound(calls);
        if (workload.equals("mix")) return mixRound(calls);
        throw new IllegalArgumentException("unknown workload " + workload);
    }

    public static void main(String[] args) throws Exception {
        String workload = args[0];
        int rounds = Integer.parseInt(args[1]);
        String tracer = args[2];
        long[] calls = new long[1];
        long checksum = 0;
        // Warm-up: as many rounds again, and at least 1 s, so the JIT has compiled what it will
        // and Hubble's control thread has applied its properties (it ticks every 250 ms).
        long warmEnd = System.nanoTime() + 1000000000L;
        checksum = round(workload, calls);
        for (int r = 1; r < rounds || System.nanoTime() < warmEnd; r++) {
            if (round(workload, calls) != checksum) {
                throw new IllegalStateException(workload + ": warm-up round " + r + " differs");
            }
        }
        if (!tracer.equals("none")) {
            // Every variant writes to the descriptor the driver opened (the VM runs in a
            // chroot; the descriptor reaches the host's file): at the stop (file, sample) or as
            // it goes (stream). 8 MiB is Debug.startMethodTracing's default buffer.
            int fd = Integer.parseInt(args[3]);
            boolean sample = tracer.equals("art-sample");
            boolean stream = tracer.equals("art-stream");
            if (!sample && !stream && !tracer.equals("art-file")) {
                throw new IllegalArgumentException("unknown tracer " + tracer);
            }
            dalvik.system.VMDebug.startMethodTracingFd(tracer, fd, 8 << 20, 0, sample, sample ? 1000 : 0, stream);
        }
        calls[0] = 0;
        long t0 = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            // Every round computes the same: a round that differs is a wrong result, not noise.
            if (round(workload, calls) != checksum) {
                throw new IllegalStateException(workload + ": round " + r + " differs");
            }
        }
        long ns = System.nanoTime() - t0;
        if (!tracer.equals("none")) {
            dalvik.system.VMDebug.stopMethodTracing();
        }
        if (args.length > 4 && args[4].equals("FLUSH")) {
            Thread.currentThread().setName("HUBBLE:flush:bench");
            Thread.sleep(1500); // the control thread writes the file; the VM must not exit first
        }
        System.out.println("result " + workload + " checksum=" + checksum + " ns=" + ns
                + " calls=" + (calls[0] / rounds) + " rounds=" + rounds);
    }
}
