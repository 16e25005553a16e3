// The Java twin of ../smali/Arith.smali: the same functions, run on OpenJDK as the oracle.
public class Arith {
  public static int sumLoop(int a, int b) {
    int n = a & 0x3ff, s = 0;
    for (int i = 0; i < n; i++) s += i * b + a;
    return s;
  }
  public static int classify(int a) {
    if (a < 0) return -1;
    if (a == 0) return 0;
    if (a > 1000) return a / 7;
    return a * 3;
  }
  public static boolean retZ(int a, int b) { return a < b; }
  public static byte retB(int a) { return (byte) a; }
  public static short retS(int a) { return (short) (a * 3); }
  public static char retC(int a) { return (char) (a + 1); }
  public static long retJ(long a, long b) { return ((a * b) ^ b) + (a >> 13); }
  public static float retF(float a, float b) { return a * b + a; }
  public static double retD(double a, double b) { return a / b + b; }
  public static void retV(int a) {}
  public static int packed(int a) {
    switch (a) {
      case 0: return 10;
      case 1: return 20;
      case 2: return 33;
      case 3: return a * 5;
      default: return -7;
    }
  }
  public static int sparse(int a) {
    switch (a) {
      case -100: return 1;
      case 7: return 2;
      case 100000: return 3;
      default: return 0;
    }
  }
  public static long mixed(long a, int b, float c) { return a + b + (long) c; }
  public static int steps(int a) {
    int x = (a & 0x7fff) + 1, n = 0;
    while (x != 1 && n < 500) {
      x = (x & 1) != 0 ? x * 3 + 1 : x >> 1;
      n++;
    }
    return n;
  }
  public static long longDivRem(long a, long b) {
    long d = b | 1;
    return a / d + a % d;
  }
  public static double remD(double a, double b) { return a % b; }
  public static float remF(float a, float b) { return a % b; }
  public static long convD2l(double a) { return (long) a; }
  public static float convL2f(long a) { return (float) a; }
}
