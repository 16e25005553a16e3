/* Loaded by a custom class loader that Main lets the GC unload before the flush. */
public class Ex {
  public static int t_exMethod(int x) {
    return t_exLeaf(x) + 1;
  }

  public static int t_exLeaf(int x) {
    return x * 2;
  }
}
