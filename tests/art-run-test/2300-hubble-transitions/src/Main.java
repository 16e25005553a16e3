/*
 * Hubble for AOSP: method tracing across ART's execution modes (see info.txt).
 *
 * Method names: every traced test method starts with "t_"; "$noinline$" keeps the optimizing
 * compiler from inlining a callee (inlined methods are not traced, as in Hubble).
 */

import java.io.File;
import java.io.RandomAccessFile;
import java.lang.ref.WeakReference;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Main {
  static final String PACKAGE = "art.test.hubble";
  static File traceDir;

  // ART test helpers (test/common/runtime_state.cc in libarttest).
  static native void ensureJitCompiled(Class<?> cls, String methodName);
  static native boolean hasJit();
  // hubble_transitions.cc: JNI bodies that call back into Java.
  static native void t_nativeCalls$noinline$(String callback);
  static native void t_nativeThrows$noinline$();
  static native void t_nativeBlocks$noinline$(Object started, Object release);

  public static void main(String[] args) throws Exception {
    System.loadLibrary(args[0]);
    String dataDir = System.getenv("DEX_LOCATION") + "/hubble-data";
    traceDir = new File(dataDir, "files/hubble");
    traceDir.mkdirs();
    // What ActivityThread does after fork: Hubble's control plane starts here (never in zygote).
    Class<?> vmRuntime = Class.forName("dalvik.system.VMRuntime");
    vmRuntime.getMethod("setProcessPackageName", String.class).invoke(null, PACKAGE);
    vmRuntime.getMethod("setProcessDataDirectory", String.class).invoke(null, dataDir);

    // Compiled methods are JIT-compiled now; every other t_ method runs in nterp (no prebuild,
    // high JIT threshold: see `run`). --debuggable runs the interpreted ones in the switch
    // interpreter instead.
    for (String m : new String[] {"t_compiledCaller$noinline$", "t_compiledLeaf$noinline$",
            "t_compiledCallsInterp$noinline$", "t_compiledThrows$noinline$",
            "t_compiledCatches$noinline$", "t_compiledRecurse$noinline$",
            "t_fromNativeCompiled$noinline$"}) {
      ensureJitCompiled(Main.class, m);
    }

    traced("interpreter", () -> t_interpCaller$noinline$());
    traced("compiled", () -> t_compiledCaller$noinline$());
    traced("interpreter->compiled", () -> t_interpCallsCompiled$noinline$());
    traced("compiled->interpreter", () -> t_compiledCallsInterp$noinline$());
    traced("JNI->compiled", () -> t_nativeCalls$noinline$("t_fromNativeCompiled$noinline$"));
    traced("JNI->interpreter", () -> t_nativeCalls$noinline$("t_fromNativeInterp$noinline$"));
    traced("exception interpreter->interpreter", () -> t_interpCatches$noinline$(0));
    traced("exception compiled->interpreter", () -> t_interpCatches$noinline$(1));
    traced("exception interpreter->compiled", () -> t_compiledCatches$noinline$(0));
    traced("exception compiled->compiled", () -> t_compiledCatches$noinline$(1));
    traced("exception JNI->Java", () -> t_javaCatchesNative$noinline$());
    traced("exception Java->JNI->Java", () -> t_javaCatchesThroughNative$noinline$());
    traced("recursion interpreter", () -> t_interpRecurse$noinline$(3));
    traced("recursion compiled", () -> t_compiledRecurse$noinline$(3));
    stoppedInNative();
    classLoaderUnloadedBeforeFlush();
  }

  // ------------------------------------------------------------------------------ the cases

  static void t_interpCaller$noinline$() { t_interpLeaf$noinline$(); }
  static void t_interpLeaf$noinline$() { }
  static void t_compiledCaller$noinline$() { t_compiledLeaf$noinline$(); }
  static void t_compiledLeaf$noinline$() { }
  static void t_interpCallsCompiled$noinline$() { t_compiledLeaf$noinline$(); }
  static void t_compiledCallsInterp$noinline$() { t_interpLeaf$noinline$(); }
  static void t_fromNativeCompiled$noinline$() { t_compiledLeaf$noinline$(); }
  static void t_fromNativeInterp$noinline$() { t_interpLeaf$noinline$(); }

  static void t_interpThrows$noinline$() { throw new IllegalStateException("interp"); }
  static void t_compiledThrows$noinline$() { throw new IllegalStateException("compiled"); }

  static void t_interpCatches$noinline$(int which) {
    try {
      if (which == 0) { t_interpThrows$noinline$(); } else { t_compiledThrows$noinline$(); }
    } catch (IllegalStateException expected) {
      t_interpLeaf$noinline$();
    }
  }

  static void t_compiledCatches$noinline$(int which) {
    try {
      if (which == 0) { t_interpThrows$noinline$(); } else { t_compiledThrows$noinline$(); }
    } catch (IllegalStateException expected) {
      t_compiledLeaf$noinline$();
    }
  }

  static void t_javaCatchesNative$noinline$() {
    try {
      t_nativeThrows$noinline$();  // ThrowNew, then returns
    } catch (IllegalStateException expected) {
      t_interpLeaf$noinline$();
    }
  }

  static void t_throwsIntoNative$noinline$() { throw new IllegalStateException("callback"); }

  static void t_javaCatchesThroughNative$noinline$() {
    try {
      t_nativeCalls$noinline$("t_throwsIntoNative$noinline$");  // returns with it pending
    } catch (IllegalStateException expected) {
      t_interpLeaf$noinline$();
    }
  }

  static int t_interpRecurse$noinline$(int n) {
    return n == 0 ? 0 : 1 + t_interpRecurse$noinline$(n - 1);
  }

  static int t_compiledRecurse$noinline$(int n) {
    return n == 0 ? 0 : 1 + t_compiledRecurse$noinline$(n - 1);
  }

  // A thread blocked in native code cannot answer a stop request: the control thread takes the
  // thread-state lock, re-checks that it is still native and stops it itself (Hubble §6). What it
  // does after it returns from native code must not be in the trace.
  static void stoppedInNative() throws Exception {
    final Object started = new Object();
    final Object release = new Object();
    final Object done = new Object();
    final boolean[] finished = new boolean[1];
    Thread worker = new Thread(() -> t_worker$noinline$(started, release, done, finished),
                               "hubble-worker");
    synchronized (started) {
      worker.start();
      started.wait();  // notified from native code: the worker is in Native from here on
    }
    Thread.sleep(200);
    worker.setName("HUBBLE:stop");   // the control thread force-stops it (worker in Native)
    Thread.sleep(200);
    synchronized (release) { release.notifyAll(); }  // back to Java: t_afterNative runs
    synchronized (done) {
      while (!finished[0]) { done.wait(); }
    }
    List<String> lines = flushAndDecode(worker, "native-stop");  // worker alive, waiting
    synchronized (done) { finished[0] = false; done.notifyAll(); }
    worker.join();
    print("stopped in native", lines);
  }

  static void t_worker$noinline$(Object started, Object release, Object done,
                                 boolean[] finished) {
    Thread.currentThread().setName("HUBBLE:start");
    settle();
    t_nativeBlocks$noinline$(started, release);  // notifies `started`, waits on `release`
    t_afterNative$noinline$();
    synchronized (done) {
      finished[0] = true;
      done.notifyAll();
      while (finished[0]) {
        try { done.wait(); } catch (InterruptedException e) { return; }
      }
    }
  }

  static void t_afterNative$noinline$() { }

  // The loader's ArtMethods are freed when it is unloaded; Hubble resolves their names first.
  static void classLoaderUnloadedBeforeFlush() throws Exception {
    Thread.currentThread().setName("HUBBLE:start");
    settle();
    WeakReference<ClassLoader> loader = callThroughCustomLoader();
    for (int i = 0; i < 20 && loader.get() != null; i++) {
      Runtime.getRuntime().gc();
      System.runFinalization();
    }
    System.out.println("loader unloaded: " + (loader.get() == null));
    print("class loader unloaded", flushAndDecode(Thread.currentThread(), "unload"));
  }

  static WeakReference<ClassLoader> callThroughCustomLoader() throws Exception {
    String jar = System.getenv("DEX_LOCATION") + "/2300-hubble-transitions-ex.jar";
    Class<?> pathClassLoader = Class.forName("dalvik.system.PathClassLoader");
    Constructor<?> ctor = pathClassLoader.getConstructor(String.class, ClassLoader.class);
    ClassLoader loader = (ClassLoader) ctor.newInstance(jar, Main.class.getClassLoader());
    Method m = loader.loadClass("Ex").getMethod("t_exMethod", int.class);
    m.invoke(null, 21);
    return new WeakReference<>(loader);
  }

  // ------------------------------------------------------------------------------ harness

  interface Case { void run() throws Exception; }

  static void traced(String name, Case body) throws Exception {
    Thread self = Thread.currentThread();
    self.setName("HUBBLE:start");
    settle();
    body.run();
    print(name, flushAndDecode(self, "case"));
  }

  // The control thread acts on a command asynchronously; give it time.
  static void settle() {
    try { Thread.sleep(100); } catch (InterruptedException e) { throw new RuntimeException(e); }
  }

  static void print(String name, List<String> lines) {
    System.out.println("== " + name);
    for (String l : lines) {
      System.out.println(l);
    }
  }

  static List<String> flushAndDecode(Thread thread, String reason) throws Exception {
    long tid = -1;
    File[] before = traceDir.listFiles();
    int known = before == null ? 0 : before.length;
    thread.setName("HUBBLE:flush:" + reason);
    File newest = null;
    for (int i = 0; i < 100 && newest == null; i++) {
      Thread.sleep(50);
      File[] files = traceDir.listFiles((d, n) -> n.endsWith(".hubble"));
      if (files != null && files.length > known) {
        for (File f : files) {
          if (newest == null || f.lastModified() > newest.lastModified()
              || (f.lastModified() == newest.lastModified() && f.getName().compareTo(newest.getName()) > 0)) {
            newest = f;
          }
        }
      }
    }
    if (newest == null) {
      return List.of("(no trace file)");
    }
    List<String> out = decode(newest);
    newest.delete();
    return out;
  }

  /** Decodes a trace file (docs/trace-format.md, versions 1 and 2; no timestamps, so the anchors
   * after the symbols are not read) into the nesting of t_ methods. */
  static List<String> decode(File file) throws Exception {
    byte[] bytes;
    try (RandomAccessFile f = new RandomAccessFile(file, "r")) {
      bytes = new byte[(int) f.length()];
      f.readFully(bytes);
    }
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    byte[] magic = new byte[8];
    b.get(magic);
    if (!new String(magic, StandardCharsets.US_ASCII).equals("HUBBLTRC")) {
      return List.of("(bad magic)");
    }
    int mode = bytes[10];
    int window = b.getInt(12);
    long n = b.getLong(56);
    int symbols = b.getInt(72);
    long[] slots = new long[(int) (n / 8)];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = b.getLong(window + 8 * i);
    }
    Map<Long, String> names = new HashMap<>();
    b.position(window + (int) n);
    for (int i = 0; i < symbols; i++) {
      long ptr = b.getLong();
      int len = b.getShort() & 0xffff;
      byte[] name = new byte[len];
      b.get(name);
      names.put(ptr, new String(name, StandardCharsets.UTF_8));
    }
    // Backwards from the end (the write position), reading the last slot of each record.
    List<long[]> records = new ArrayList<>();  // {kind (0 exit, 1 entry), method}
    int i = slots.length - 1;
    while (i >= 0) {
      long lo = slots[i] & 0xffffffffL;
      if (lo == 0) {
        records.add(new long[] {0, 0});
        i -= 1;
      } else if (lo == 1 && mode == 64) {
        if (i == 0) break;  // pointer slot outside the window
        records.add(new long[] {1, slots[i - 1]});
        i -= 2;
      } else if (lo == 2) {
        i -= 1;  // pad
      } else if (lo == 3) {
        break;   // start record: the window begins here
      } else {
        records.add(new long[] {1, lo});
        i -= 1;
      }
    }
    List<String> out = new ArrayList<>();
    ArrayDeque<String> stack = new ArrayDeque<>();
    for (int k = records.size() - 1; k >= 0; k--) {
      long[] r = records.get(k);
      if (r[0] == 1) {
        String name = shortName(names.getOrDefault(r[1], "?"));
        if (name != null) {
          out.add("  ".repeat(depth(stack)) + "> " + name);
        }
        stack.push(name == null ? "" : name);
      } else if (!stack.isEmpty()) {
        String name = stack.pop();
        if (!name.isEmpty()) {
          out.add("  ".repeat(depth(stack)) + "< " + name);
        }
      }
      // An exit with an empty stack closes a frame entered before tracing started: ignored.
    }
    return out;
  }

  static int depth(ArrayDeque<String> stack) {
    int d = 0;
    for (String s : stack) {
      if (!s.isEmpty()) d++;
    }
    return d;
  }

  /** "void Main.t_interpLeaf$noinline$()" -> "Main.t_interpLeaf$noinline$"; others: null. */
  static String shortName(String pretty) {
    int paren = pretty.indexOf('(');
    String head = paren < 0 ? pretty : pretty.substring(0, paren);
    int space = head.lastIndexOf(' ');
    String qualified = head.substring(space + 1);
    int dot = qualified.lastIndexOf('.');
    String method = qualified.substring(dot + 1);
    return method.startsWith("t_") ? qualified : null;
  }
}
