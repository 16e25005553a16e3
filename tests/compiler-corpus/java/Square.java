// Java twin of ../smali/Square.smali (tests/corpus_objects.rs).
public class Square extends Shape implements Scalable {
  public byte tag;
  public short code;
  public char letter;
  public boolean on;
  public float ratio;

  public int kind() {
    return super.kind() + 4;
  }

  public double area(double s) {
    return s * s * scale;
  }

  public int grow(int k) {
    tag = (byte) (tag + k);
    int r = tag;
    code = (short) (code ^ k);
    r += code;
    letter = (char) (letter + 1);
    r += letter;
    on = !on;
    r += on ? 1 : 0;
    ratio = ratio * 1.5f;
    return r + k;
  }

  public int viaIface(int k) {
    Scalable s = this;
    int a = s.grow(k);
    int b = s.grow(k + 7);
    return a + b * 3;
  }

  public long mix(long a, float f) {
    long h = (hits ^ a) + (long) (ratio + f);
    hits = h;
    ratio = f;
    return h;
  }
}
