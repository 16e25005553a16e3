// Assembles many smali directories in one JVM with Debian's smali library (the code behind the
// `smali a` command, same defaults), for corpus (b) (proving/art-compile/tests/corpus_b.rs):
// 144 JVM start-ups cost more than the assembling.
//   java -cp DIR:/usr/share/java/smali.jar SmaliBatch OUTDIR TEST/smali...
// writes OUTDIR/TEST.dex per directory and prints "ok TEST" or "fail TEST".
import java.io.File;
import org.jf.smali.Smali;
import org.jf.smali.SmaliOptions;

public class SmaliBatch {
  public static void main(String[] args) {
    for (int i = 1; i < args.length; i++) {
      String name = new File(args[i]).getParentFile().getName();
      SmaliOptions options = new SmaliOptions();
      options.outputDexFile = args[0] + "/" + name + ".dex";
      options.jobs = 1;
      boolean ok;
      try {
        ok = Smali.assemble(options, args[i]) && new File(options.outputDexFile).isFile();
      } catch (Exception e) {
        ok = false;
      }
      System.out.println((ok ? "ok " : "fail ") + name);
    }
  }
}
