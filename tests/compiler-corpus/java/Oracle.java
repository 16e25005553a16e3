// The oracle of the compiler corpus (rust/harness/art-compile/tests/corpus.rs): runs the Java
// twins on OpenJDK.
//   java Oracle list CLASS...   one line per public static method: descriptor and shorty
//   java Oracle run             stdin lines "CLASS METHOD ARGBITS...", arguments as the hex
//                               of their bits; prints the result's canonical bits in hex
//                               (sub-word ints sign/zero-extended to 64 bits, floats' IEEE
//                               bits), "void", or "throw CLASSNAME"
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Comparator;

public class Oracle {
  static char shortyOf(Class<?> c) {
    if (c == int.class) return 'I';
    if (c == long.class) return 'J';
    if (c == float.class) return 'F';
    if (c == double.class) return 'D';
    if (c == boolean.class) return 'Z';
    if (c == byte.class) return 'B';
    if (c == short.class) return 'S';
    if (c == char.class) return 'C';
    if (c == void.class) return 'V';
    return 'L';
  }

  static String descriptorOf(Class<?> c) {
    char s = shortyOf(c);
    return s == 'L' ? "L" + c.getName().replace('.', '/') + ";" : String.valueOf(s);
  }

  static Object arg(Class<?> c, long bits) {
    switch (shortyOf(c)) {
      case 'I': return (int) bits;
      case 'J': return bits;
      case 'F': return Float.intBitsToFloat((int) bits);
      case 'D': return Double.longBitsToDouble(bits);
      case 'Z': return bits != 0;
      case 'B': return (byte) bits;
      case 'S': return (short) bits;
      case 'C': return (char) bits;
      default: throw new IllegalArgumentException("unsupported parameter type " + c);
    }
  }

  static String result(Object r) {
    if (r == null) return "void";
    long bits;
    if (r instanceof Integer) bits = (Integer) r;
    else if (r instanceof Long) bits = (Long) r;
    else if (r instanceof Float) bits = Float.floatToRawIntBits((Float) r) & 0xffffffffL;
    else if (r instanceof Double) bits = Double.doubleToRawLongBits((Double) r);
    else if (r instanceof Boolean) bits = ((Boolean) r) ? 1 : 0;
    else if (r instanceof Byte) bits = (Byte) r;
    else if (r instanceof Short) bits = (Short) r;
    else if (r instanceof Character) bits = (Character) r;
    else throw new IllegalArgumentException("unsupported result " + r.getClass());
    return Long.toHexString(bits);
  }

  static Method find(String cls, String name) throws Exception {
    for (Method m : Class.forName(cls).getDeclaredMethods()) {
      if (m.getName().equals(name)) return m;
    }
    throw new NoSuchMethodException(cls + "." + name);
  }

  public static void main(String[] argv) throws Exception {
    if (argv.length > 0 && argv[0].equals("list")) {
      for (int i = 1; i < argv.length; i++) {
        Method[] ms = Class.forName(argv[i]).getDeclaredMethods();
        Arrays.sort(ms, Comparator.comparing(Method::getName));
        for (Method m : ms) {
          if (!Modifier.isStatic(m.getModifiers()) || !Modifier.isPublic(m.getModifiers())) continue;
          StringBuilder d = new StringBuilder("L" + argv[i] + ";->" + m.getName() + "(");
          StringBuilder s = new StringBuilder().append(shortyOf(m.getReturnType()));
          for (Class<?> p : m.getParameterTypes()) {
            d.append(descriptorOf(p));
            s.append(shortyOf(p));
          }
          d.append(")").append(descriptorOf(m.getReturnType()));
          System.out.println(d + " " + s);
        }
      }
      return;
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    StringBuilder out = new StringBuilder();
    Method m = null;
    String key = "";
    for (String line; (line = in.readLine()) != null; ) {
      String[] f = line.trim().split(" ");
      if (!key.equals(f[0] + " " + f[1])) {
        m = find(f[0], f[1]);
        key = f[0] + " " + f[1];
      }
      Class<?>[] ps = m.getParameterTypes();
      Object[] args = new Object[ps.length];
      for (int i = 0; i < ps.length; i++) args[i] = arg(ps[i], Long.parseUnsignedLong(f[2 + i], 16));
      try {
        out.append(result(m.invoke(null, args))).append('\n');
      } catch (InvocationTargetException e) {
        out.append("throw ").append(e.getCause().getClass().getName()).append('\n');
      }
    }
    System.out.print(out);
  }
}
