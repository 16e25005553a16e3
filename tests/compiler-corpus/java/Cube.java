// Java twin of ../smali/Cube.smali (tests/corpus_objects.rs).
public class Cube extends Square {
  public int kind() {
    return super.kind() * 2;
  }

  public int grow(int k) {
    return super.grow(k) + 1000;
  }
}
