// Java twin of ../smali/Shape.smali (tests/corpus_objects.rs).
public class Shape {
  public int sides;
  public double scale;
  public long hits;
  public Shape self;

  public int kind() {
    return 10;
  }

  public double area(double s) {
    return scale * s;
  }

  private int helper(int n) {
    return n * 3 + (int) hits;
  }

  public int describe(int n) {
    hits += n;
    return kind() * 100 + helper(n) + sides;
  }

  public double measure(double s) {
    return area(s) + scale;
  }

  public int same() {
    self = this;
    Shape s = self;
    self = null;
    return s == this ? 1 : 0;
  }

  public int nullSelf(int n) {
    Shape s = self;
    if (n > 100) {
      try {
        return s.kind();
      } catch (NullPointerException e) {
        return -1;
      }
    }
    if ((n & 1) != 0) {
      return s.kind();
    }
    return s.sides;
  }

  private int divide(int a, int b) {
    return a / b;
  }

  public int rethrow(int a, int b) {
    try {
      return divide(a, b);
    } finally {
      sides += 1;
    }
  }

  public int outer(int a, int b) {
    try {
      return rethrow(a, b);
    } catch (ArithmeticException e) {
      hits += 100;
      return e == null ? -2 : -1;
    }
  }
}
