/*
 * Hubble for AOSP: task records written by ART (see info.txt).
 */

import java.io.File;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

public class Main {
  static final String PACKAGE = "art.test.hubble";
  /** Identities are 28 bits (ART's LockWord::kHashSize; runtime/hubble/trace_point.h). */
  static final long IDENTITY_MASK = (1L << 28) - 1;
  static final String[] KINDS = {"submit", "begin", "begin-until-end", "end"};
  static File traceDir;

  public static void main(String[] args) throws Exception {
    String dataDir = System.getenv("DEX_LOCATION") + "/hubble-data";
    traceDir = new File(dataDir, "files/hubble");
    traceDir.mkdirs();
    // What ActivityThread does after fork: the control plane starts here, and its control
    // thread turns task records on before it handles any command.
    Class<?> vmRuntime = Class.forName("dalvik.system.VMRuntime");
    vmRuntime.getMethod("setProcessPackageName", String.class).invoke(null, PACKAGE);
    vmRuntime.getMethod("setProcessDataDirectory", String.class).invoke(null, dataDir);
    // A first flush: once its file exists, the control thread has started task records.
    File ready = flush("ready");
    System.out.println(ready == null ? "no trace file (is Hubble in this ART?)" : "ready");
    if (ready == null) {
      return;
    }
    ready.delete();

    Map<Object, String> known = new LinkedHashMap<>();
    Thread[] workerThread = new Thread[1];
    ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS,
        new LinkedBlockingQueue<Runnable>(), r -> {
          workerThread[0] = new Thread(r, "hubble-worker");
          return workerThread[0];
        });
    known.put(pool, "pool");
    Runnable[] rs = new Runnable[3];
    for (int i = 0; i < rs.length; i++) {
      final int slow = i == 0 ? 200 : 1;
      rs[i] = () -> sleep(slow);
      known.put(rs[i], "r" + i);
    }
    for (Runnable r : rs) {
      pool.execute(r);
    }
    known.put(workerThread[0], "worker-thread");
    Thread plain = new Thread(() -> sleep(1), "hubble-plain");
    known.put(plain, "plain-thread");
    plain.start();
    plain.join();
    Future<?> f = pool.submit(() -> 42);
    known.put(f, "f");
    f.get();
    pool.shutdown();
    pool.awaitTermination(10, TimeUnit.SECONDS);
    workerThread[0].join();

    File file = flush("tasks");
    if (file == null) {
      System.out.println("no trace file");
      return;
    }
    Map<Long, String> names = new HashMap<>();
    for (Map.Entry<Object, String> e : known.entrySet()) {
      names.put(System.identityHashCode(e.getKey()) & IDENTITY_MASK, e.getValue());
    }
    Map<String, List<long[]>> tasks = taskRecords(file);
    file.delete();
    for (String thread : new String[] {"main", "hubble-worker", "hubble-plain"}) {
      List<long[]> records = tasks.get(thread);
      System.out.println("== " + thread + (records == null ? " (no such thread in the file)" : ""));
      if (records == null) {
        continue;
      }
      for (long[] r : records) {
        String task = names.get(r[1]);
        if (task == null) {
          continue;  // a task of the runtime or the test harness, not of this test
        }
        String queue = r[2] == 0 ? "" : " in " + names.getOrDefault(r[2], "?");
        if (r[0] == 0 && r[2] != 0) {
          queue = " to " + names.getOrDefault(r[2], "?");
        }
        System.out.println(KINDS[(int) r[0]] + " " + task + queue);
      }
    }
  }

  static void sleep(int ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      throw new RuntimeException(e);
    }
  }

  /** Asks for a flush (the thread-name command) and waits for the new file. */
  static File flush(String reason) throws Exception {
    File[] before = traceDir.listFiles((d, n) -> n.endsWith(".hubble"));
    int known = before == null ? 0 : before.length;
    Thread.currentThread().setName("HUBBLE:flush:" + reason);  // the thread keeps its name
    for (int i = 0; i < 200; i++) {
      Thread.sleep(50);
      File[] files = traceDir.listFiles((d, n) -> n.endsWith("-" + reason + ".hubble"));
      if (files != null && files.length > 0) {
        return files[0];
      }
    }
    return null;
  }

  /**
   * Each thread's task records ({kind, task, queue}), in order, from a version 4 file
   * (docs/trace-format.md, "Version 4"): every run of a thread decoded backwards from its end to
   * its last start record.
   */
  static Map<String, List<long[]>> taskRecords(File file) throws Exception {
    byte[] bytes;
    try (RandomAccessFile f = new RandomAccessFile(file, "r")) {
      bytes = new byte[(int) f.length()];
      f.readFully(bytes);
    }
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    byte[] magic = new byte[8];
    b.get(magic);
    Map<String, List<long[]>> out = new HashMap<>();
    if (!new String(magic, StandardCharsets.US_ASCII).equals("HUBBLTRC") || b.getShort(8) != 4) {
      System.out.println("not a version 4 trace file");
      return out;
    }
    int mode = bytes[10];
    int metadata = bytes[11] & 0xff;
    int threads = b.getInt(12);
    int symbols = b.getInt(44);
    b.position(48);
    skipString(b);  // process name
    skipString(b);  // trigger reason
    for (int i = 0; i < symbols; i++) {
      b.getLong();
      skipString(b);
    }
    for (int i = 0; i < metadata; i++) {
      skipString(b);
      skipString(b);
    }
    for (int t = 0; t < threads; t++) {
      b.getInt();  // tid
      int runs = b.getInt();
      int anchors = b.getInt();
      String name = readString(b);
      b.position(b.position() + 16 * anchors);
      List<long[]> records = out.computeIfAbsent(name, k -> new ArrayList<>());
      for (int r = 0; r < runs; r++) {
        b.getInt();  // first seq
        b.getInt();  // blocks
        b.getLong();  // first ticket
        b.getLong();  // counter when its first block was taken
        long n = b.getLong();
        long[] slots = new long[(int) n];
        for (int i = 0; i < n; i++) {
          slots[i] = b.getLong();
        }
        records.addAll(tasksOfRun(slots, mode));
      }
    }
    return out;
  }

  /** The run's task records, oldest first. */
  static List<long[]> tasksOfRun(long[] slots, int mode) {
    List<long[]> backwards = new ArrayList<>();
    int i = slots.length - 1;
    while (i >= 0) {
      long lo = slots[i] & 0xffffffffL;
      if (lo == 4) {  // a task record's second slot; its payload is the slot before
        if (i == 0) break;
        long payload = slots[i - 1];
        long plo = payload & 0xffffffffL;
        long kind = ((plo >> 1) & 1) | (((plo >> 3) & 1) << 1);
        backwards.add(new long[] {kind, (plo >>> 4) & IDENTITY_MASK, (payload >>> 32) & IDENTITY_MASK});
        i -= 2;
      } else if (lo == 1 && mode == 64) {
        i -= 2;  // a wide entry: the pointer is in the slot before
      } else if (lo == 3) {
        break;  // a start record: the run decodes from here
      } else {
        i -= 1;  // an exit, a pad or a one-slot entry
      }
    }
    List<long[]> out = new ArrayList<>();
    for (int k = backwards.size() - 1; k >= 0; k--) {
      out.add(backwards.get(k));
    }
    return out;
  }

  static String readString(ByteBuffer b) {
    int len = b.getShort() & 0xffff;
    byte[] s = new byte[len];
    b.get(s);
    return new String(s, StandardCharsets.UTF_8);
  }

  static void skipString(ByteBuffer b) {
    int len = b.getShort() & 0xffff;
    b.position(b.position() + len);
  }
}
