// Java twin of ../smali/Scalable.smali (tests/corpus_objects.rs).
public interface Scalable {
  int grow(int k);
}
