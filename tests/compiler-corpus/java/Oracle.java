// The oracle of the compiler corpus (proving/art-compile/tests/corpus.rs): runs the Java
// twins on OpenJDK.
//   java Oracle list CLASS...   one line per public static method: descriptor and shorty
//   java Oracle run             stdin lines "CLASS METHOD ARGBITS...", arguments as the hex
//                               of their bits; prints the result's canonical bits in hex
//                               (sub-word ints sign/zero-extended to 64 bits, floats' IEEE
//                               bits), "void", or "throw CLASSNAME". An instance method's line
//                               goes on with "@ RECEIVERCLASS FIELD=BITS...": the receiver, a
//                               new object of that class with those fields set (the others
//                               zero); the answer then goes on with " |" and every instance
//                               field of the receiver after the call, "FIELD=BITS" sorted by
//                               name (a reference field: 0 if null, else "ref")
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
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

  // The instance fields of `c` and its superclasses.
  static ArrayList<Field> fields(Class<?> c) {
    ArrayList<Field> out = new ArrayList<>();
    for (; c != null; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers())) continue;
        f.setAccessible(true);
        out.add(f);
      }
    }
    out.sort(Comparator.comparing(Field::getName));
    return out;
  }

  static Object receiver(String cls, String[] f, int from) throws Exception {
    Class<?> c = Class.forName(cls);
    Object o = c.getDeclaredConstructor().newInstance();
    ArrayList<Field> all = fields(c);
    for (int i = from; i < f.length; i++) {
      String[] kv = f[i].split("=");
      Field fd = null;
      for (Field x : all) if (x.getName().equals(kv[0])) fd = x;
      if (fd == null) throw new NoSuchFieldException(cls + "." + kv[0]);
      fd.set(o, arg(fd.getType(), Long.parseUnsignedLong(kv[1], 16)));
    }
    return o;
  }

  static String after(Object o) throws Exception {
    StringBuilder b = new StringBuilder(" |");
    for (Field f : fields(o.getClass())) {
      Object v = f.get(o);
      String bits = shortyOf(f.getType()) == 'L' ? (v == null ? "0" : "ref") : result(v);
      b.append(' ').append(f.getName()).append('=').append(bits);
    }
    return b.toString();
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
      Object self = null;
      if (f.length > 2 + ps.length) {
        if (!f[2 + ps.length].equals("@")) throw new IllegalArgumentException("bad line " + line);
        self = receiver(f[3 + ps.length], f, 4 + ps.length);
      }
      m.setAccessible(true);
      try {
        out.append(result(m.invoke(self, args)));
      } catch (InvocationTargetException e) {
        out.append("throw ").append(e.getCause().getClass().getName());
      }
      if (self != null) out.append(after(self));
      out.append('\n');
    }
    System.out.print(out);
  }
}
