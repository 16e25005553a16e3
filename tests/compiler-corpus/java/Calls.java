// The Java twin of ../smali/Calls.smali: call trees, run on OpenJDK as the oracle. Only the
// public methods are called by the harness; the private ones are reached through invoke-static.
public class Calls {
  // Recursion: fib(n) for n in [0, 12] (up to 465 calls).
  public static int fib(int x) {
    return fibRec((x & 0x7fffffff) % 13);
  }

  private static int fibRec(int n) {
    if (n < 2) return n;
    return fibRec(n - 1) + fibRec(n - 2);
  }

  // Ackermann, bounded: m and n in [0, 3] (up to 2432 calls, 63 frames deep).
  public static int ackermann(int m, int n) {
    return ack((m & 0x7fffffff) % 4, (n & 0x7fffffff) % 4);
  }

  private static int ack(int m, int n) {
    if (m == 0) return n + 1;
    if (n == 0) return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
  }

  // A call tree seven frames deep (tree, t1 .. t6), 47 calls, with int, long, float and double
  // arguments (invoke-static/range for t1 and t2; thumb2 passes some on the stack) and a void
  // callee.
  public static long tree(int a, long b, float c, double d) {
    long x = t1(a, b, c, d);
    long y = t1(a ^ 0x55, b + 3, c * 0.5f, d - 1.0);
    return x * 31 + y;
  }

  private static long t1(int a, long b, float c, double d) {
    return t2(a + 1, b ^ a, c + 1.0f, d) + t2(a - 1, b, c, d * 2.0);
  }

  private static long t2(int a, long b, float c, double d) {
    int k = t3(a, (int) b, (int) (b >>> 32), c);
    double m = mix(d, c, a);
    return b + k + (long) m;
  }

  private static double mix(double d, float f, int i) {
    return d * 0.25 + f - i;
  }

  private static int t3(int a, int b, int c, float f) {
    return t4(a, b, c, f, a ^ c) * 3 + t4(b, a, c, -f, 7);
  }

  private static int t4(int a, int b, int c, float f, int e) {
    return t5(a + b, (long) c * e, f) - e;
  }

  private static int t5(int a, long b, float f) {
    nop(a);
    return t6(a, b, (int) f) ^ (int) f;
  }

  private static int t6(int a, long b, int c) {
    return a * 17 + (int) (b >>> 7) + (c << 2);
  }

  private static void nop(int a) {}

  // Calls in a loop (a suspend check per iteration): the sum of i * i for i < (n & 31).
  public static int sumSquares(int n) {
    int s = 0;
    for (int i = 0; i < (n & 31); i++) s += sq(i);
    return s;
  }

  private static int sq(int i) {
    return i * i;
  }

  // An exception three frames down: div2 divides by (b & 3), zero a quarter of the time.
  public static int divDeep(int a, int b) {
    return div1(a, b) + 1;
  }

  private static int div1(int a, int b) {
    return div2(a, b & 3) * 2;
  }

  private static int div2(int a, int b) {
    return a / b;
  }

  // Exceptions caught in compiled code (the smali's handlers do not read the exception).
  public static int catchHere(int a, int b) {
    int x = a * 3;
    try {
      x = x / (b & 3);
    } catch (ArithmeticException e) {
      return x + 100;
    }
    return x;
  }

  public static int catchPhi(int a, int b) {
    int x = a;
    try {
      x = a / (b & 3);
      x = x + 1000 / ((b >> 2) & 3);
    } catch (ArithmeticException e) {
      return x - 7;
    }
    return x;
  }

  public static int catchUp(int a, int b) {
    int y = a ^ 0x55;
    int r;
    try {
      r = div1(a, b);
    } catch (ArithmeticException e) {
      return y * 2;
    }
    return y + r;
  }

  public static int catchSuper(int a, int b) {
    try {
      return a % (b & 1);
    } catch (RuntimeException e) {
      return -77;
    }
  }

  public static int catchMiss(int a, int b) {
    try {
      try {
        return a / (b & 1);
      } catch (NullPointerException e) {
        return -2;
      }
    } catch (Exception e) {
      return -3;
    }
  }

  public static int catchWrong(int a, int b) {
    try {
      return a / (b & 1);
    } catch (NullPointerException e) {
      return -2;
    }
  }
}
