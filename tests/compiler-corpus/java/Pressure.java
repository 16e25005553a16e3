// The Java twin of ../smali/Pressure.smali.
public class Pressure {
  public static int live30(int a, int b) {
    int[] v = new int[30];
    for (int i = 0; i < 30; i++) v[i] = a * (i + 3) + b;
    int r = v[29];
    for (int i = 28; i >= 0; i--) { r *= 31; r = (i % 2 != 0) ? (r ^ v[i]) : (r + v[i]); }
    return r;
  }
}
