// A long-lived javac + dx driver for proving/host-vm/run-tests/run: one JVM compiles and dexes
// many tests, instead of starting two JVMs per test.
//
// Protocol (stdin, one request a line, fields separated by TAB):
//   javac<TAB>LOGFILE<TAB>ARG...   the JDK's javac (javax.tools), its messages into LOGFILE
//   dx<TAB>LOGFILE<TAB>ARG...      dx's dexer (the arguments that follow 'dx --dex')
//   merge<TAB>LOGFILE<TAB>OUT<TAB>IN...  dx's DexMerger: IN... into OUT, the first of a class wins
// Answer on stdout: one line, the tool's exit status (or 99 when it threw).
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.util.Arrays;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

public class BatchTool {
  public static void main(String[] argv) throws Exception {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintStream answer = new PrintStream(new FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] f = line.split("\t", -1);
      String[] args = Arrays.copyOfRange(f, 2, f.length);
      int rc;
      try (FileOutputStream log = new FileOutputStream(f[1]);
           PrintStream ps = new PrintStream(log, true, "UTF-8")) {
        try {
          if (f[0].equals("javac")) {
            rc = javac.run(null, ps, ps, args);
          } else if (f[0].equals("dx")) {
            com.android.dx.command.dexer.DxContext ctx = new com.android.dx.command.dexer.DxContext(ps, ps);
            com.android.dx.command.dexer.Main.Arguments a = new com.android.dx.command.dexer.Main.Arguments(ctx);
            java.lang.reflect.Method parse =
                com.android.dx.command.dexer.Main.Arguments.class.getDeclaredMethod("parse", String[].class);
            parse.setAccessible(true);
            parse.invoke(a, (Object) args);  // flags, file names, options objects (as dx's main)
            rc = new com.android.dx.command.dexer.Main(ctx).runDx(a);
            com.android.dx.command.dexer.Main.clearInternTables();
          } else if (f[0].equals("merge")) {
            // merge OUT IN...: one dex of the inputs; a class in an earlier input wins.
            com.android.dex.Dex[] dexes = new com.android.dex.Dex[args.length - 1];
            for (int i = 1; i < args.length; i++) dexes[i - 1] = new com.android.dex.Dex(new java.io.File(args[i]));
            com.android.dx.command.dexer.DxContext ctx = new com.android.dx.command.dexer.DxContext(ps, ps);
            new com.android.dx.merge.DexMerger(dexes, com.android.dx.merge.CollisionPolicy.KEEP_FIRST, ctx)
                .merge().writeTo(new java.io.File(args[0]));
            rc = 0;
          } else {
            ps.println("BatchTool: unknown tool " + f[0]);
            rc = 98;
          }
        } catch (Throwable t) {
          t.printStackTrace(ps);
          rc = 99;
        }
      }
      answer.println(rc);
    }
  }
}
