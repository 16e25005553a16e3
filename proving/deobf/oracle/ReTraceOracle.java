import java.io.BufferedReader;
import java.io.File;
import java.io.FileReader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import proguard.obfuscate.MappingProcessor;
import proguard.obfuscate.MappingReader;
import proguard.retrace.FrameInfo;
import proguard.retrace.FrameRemapper;

/**
 * The reference for proving/deobf: what ProGuard's own ReTrace (its FrameRemapper, the class
 * the ReTrace command runs on every stack frame) maps each obfuscated method to.
 *
 * <p>Usage: {@code ReTraceOracle mapping.txt names.txt}. Each line of names.txt is one obfuscated
 * method as ART prints it ({@code ret class.name(arg, arg)}); for each, one line is printed:
 * the deobfuscated name(s), joined with {@code " | "} when ReTrace finds several, a tab, and
 * {@code ok}, {@code ambiguous} or {@code kept} (ReTrace found no method with that name and
 * signature and kept the obfuscated method name; constructors and static initializers, which
 * keep their names, are {@code ok}).
 *
 * <p>ReTrace is given the frame's obfuscated return type and argument types: it maps them back
 * through the class mapping and keeps the candidates whose original types match.
 */
public class ReTraceOracle {
    /** The obfuscated names of the mapping's classes (classes it does not have keep names). */
    static final Set<String> MAPPED = new HashSet<>();

    public static void main(String[] args) throws Exception {
        FrameRemapper remapper = new FrameRemapper();
        new MappingReader(new File(args[0])).pump(new MappingProcessor() {
            @Override
            public boolean processClassMapping(String className, String newClassName) {
                MAPPED.add(newClassName);
                return remapper.processClassMapping(className, newClassName);
            }

            @Override
            public void processFieldMapping(String className, String fieldType, String fieldName,
                    String newClassName, String newFieldName) {
                remapper.processFieldMapping(className, fieldType, fieldName, newClassName,
                        newFieldName);
            }

            @Override
            public void processMethodMapping(String className, int firstLineNumber,
                    int lastLineNumber, String methodReturnType, String methodName,
                    String methodArguments, String newClassName, int newFirstLineNumber,
                    int newLastLineNumber, String newMethodName) {
                remapper.processMethodMapping(className, firstLineNumber, lastLineNumber,
                        methodReturnType, methodName, methodArguments, newClassName,
                        newFirstLineNumber, newLastLineNumber, newMethodName);
            }
        });
        try (BufferedReader in = new BufferedReader(new FileReader(args[1]))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (!line.trim().isEmpty()) {
                    System.out.println(retrace(remapper, line.trim()));
                }
            }
        }
    }

    static String retrace(FrameRemapper remapper, String pretty) {
        int open = pretty.indexOf('(');
        String head = pretty.substring(0, open);
        String ret = head.substring(0, head.lastIndexOf(' '));
        String qualified = head.substring(head.lastIndexOf(' ') + 1);
        String className = qualified.substring(0, qualified.lastIndexOf('.'));
        String method = qualified.substring(qualified.lastIndexOf('.') + 1);
        String arguments = pretty.substring(open + 1, pretty.length() - 1).replace(", ", ",");

        List<FrameInfo> found =
                remapper.transform(new FrameInfo(className, null, 0, ret, null, method, arguments));
        List<String> names = new ArrayList<>();
        for (FrameInfo f : found) {
            String name = format(f);
            if (!names.contains(name)) {
                names.add(name);
            }
        }
        String status = names.size() > 1 ? "ambiguous" : "ok";
        if (names.size() == 1 && MAPPED.contains(className)
                && found.get(0).getMethodName().equals(method)
                && !method.equals("<init>") && !method.equals("<clinit>")) {
            // The name is unchanged: a kept member, or ReTrace's fallback when nothing matched.
            // A real member is among the candidates ReTrace lists by name alone.
            boolean real = false;
            for (FrameInfo c : remapper.transform(
                    new FrameInfo(className, null, 0, null, null, method, null))) {
                real |= format(c).equals(names.get(0));
            }
            if (!real) {
                // ReTrace's fallback keeps the obfuscated method name and return type; hubble
                // maps every type, so the reference does too, through ReTrace's class mapping.
                status = "kept";
                List<String> types = new ArrayList<>();
                for (String a : arguments.isEmpty() ? new String[0] : arguments.split(",")) {
                    types.add(originalType(remapper, a));
                }
                names.set(0, originalType(remapper, ret) + " "
                        + found.get(0).getClassName() + "." + method + "("
                        + String.join(", ", types) + ")");
            }
        }
        return String.join(" | ", names) + "\t" + status;
    }

    /** A type's original name as ReTrace maps a class name alone (arrays element-wise). */
    static String originalType(FrameRemapper remapper, String type) {
        int dims = type.indexOf('[');
        String base = dims < 0 ? type : type.substring(0, dims);
        String suffix = dims < 0 ? "" : type.substring(dims);
        List<FrameInfo> f =
                remapper.transform(new FrameInfo(base, null, 0, null, null, null, null));
        return (f.isEmpty() ? base : f.get(0).getClassName()) + suffix;
    }

    static String format(FrameInfo f) {
        String arguments = f.getArguments() == null ? "" : f.getArguments().replace(",", ", ");
        return f.getType() + " " + f.getClassName() + "." + f.getMethodName() + "(" + arguments + ")";
    }
}
