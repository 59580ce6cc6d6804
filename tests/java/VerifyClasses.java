import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Asks the JVM to verify every class of a jar or a class directory.
 *
 * <pre>
 *   java -Xverify:all -cp HARNESS_DIR VerifyClasses PATH [EXTRA_CLASSPATH...]
 * </pre>
 *
 * PATH is a .jar or a directory of .class files laid out by package. Every class in it (except
 * module-info, package-info and anything under META-INF/) is loaded by a URLClassLoader over PATH
 * and the extra class path entries, whose parent is the platform class loader (so the harness's
 * own class path does not leak in).
 *
 * <p>Each class is loaded without initialization ({@code Class.forName(name, false, loader)}) and
 * then linked by asking for its public fields: HotSpot links a class (verifying every method of it
 * and its supertypes against their StackMapTables) before it hands out reflective field data, and
 * linking never runs static initializers. So no code of the library runs, and a class is verified
 * even when its static initializer would fail.
 *
 * <p>Output: one line per failure, {@code VERIFY <class>: <error>} for a VerifyError or
 * ClassFormatError (including UnsupportedClassVersionError), {@code OTHER <class>: <error>} for any
 * other failure (typically a missing optional dependency), the first few VerifyErrors also with the
 * JVM's full details, indented; then one summary line:
 * {@code <PATH>: classes=N verified=N verify_errors=N other_failures=N}.
 *
 * <p>Exit status: 0 if no class failed verification, 1 if some did, 2 on bad usage or unreadable
 * PATH.
 *
 * <p>{@code VerifyClasses --serve} answers many such runs in one JVM (the tests' verifier: one JVM start per test
 * process instead of one per run), in tests/java/ToolServer.java's format: per request a line with the number N
 * of arguments, a line naming the tool (ignored), N lines of arguments; per answer a line
 * {@code EXIT OUTLEN ERRLEN} and the output and error bytes (UTF-8). A run in the server verifies as a run of its
 * own does: its classes are loaded by a class loader of the run's own (closed at its end) in a JVM started with
 * {@code -Xverify:all}, which verifies the classes of every loader; no code of the classes runs, so a run leaves
 * nothing behind but classes the next run cannot see.
 */
public final class VerifyClasses {
    private static final int DETAILED_VERIFY_ERRORS = 3;
    private static final int MAX_OTHER_LINES = 50;

    private VerifyClasses() {}

    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("--serve")) {
            serve();
            return;
        }
        System.out.flush();
        System.exit(verify(args, System.out, System.err));
    }

    private static void serve() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        OutputStream answers = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        for (String count; (count = in.readLine()) != null; ) {
            if (count.isEmpty()) continue;
            in.readLine();  // the tool's name
            String[] runArgs = new String[Integer.parseInt(count)];
            for (int i = 0; i < runArgs.length; i++) runArgs[i] = in.readLine();
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            int code;
            try (PrintStream po = new PrintStream(o, true, StandardCharsets.UTF_8);
                 PrintStream pe = new PrintStream(e, true, StandardCharsets.UTF_8)) {
                code = verify(runArgs, po, pe);
            }
            byte[] ob = o.toByteArray();
            byte[] eb = e.toByteArray();
            answers.write((code + " " + ob.length + " " + eb.length + "\n").getBytes(StandardCharsets.US_ASCII));
            answers.write(ob);
            answers.write(eb);
            answers.flush();
        }
    }

    /** One run: what main prints for ARGS, on {@code out} and {@code err}; returns the exit status. */
    static int verify(String[] args, PrintStream out, PrintStream err) {
        if (args.length < 1) {
            err.println("usage: java -Xverify:all -cp HARNESS_DIR VerifyClasses PATH [EXTRA_CLASSPATH...]");
            return 2;
        }
        Path path = Paths.get(args[0]);
        List<String> names;
        try {
            if (Files.isDirectory(path)) {
                names = classesInDirectory(path);
            } else if (Files.isRegularFile(path)) {
                names = classesInJar(path);
            } else {
                err.println("VerifyClasses: " + args[0] + ": no such jar or directory");
                return 2;
            }
        } catch (IOException e) {
            err.println("VerifyClasses: " + args[0] + ": cannot read: " + e);
            return 2;
        }

        List<URL> urls = new ArrayList<>();
        try {
            for (String entry : args) {
                // Extra arguments may themselves be class paths (a:b:c).
                for (String part : entry.split(File.pathSeparator)) {
                    if (!part.isEmpty()) {
                        urls.add(new File(part).toURI().toURL());
                    }
                }
            }
        } catch (IOException e) {
            err.println("VerifyClasses: bad class path entry: " + e);
            return 2;
        }

        int verified = 0;
        int verifyErrors = 0;
        int otherFailures = 0;
        try (URLClassLoader loader =
                new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader())) {
            for (String name : names) {
                try {
                    Class<?> c = Class.forName(name, false, loader);
                    // Forces linking (and so verification) of c and its supertypes; see above.
                    c.getFields();
                    verified++;
                } catch (Throwable t) {
                    Throwable v = verifyFailure(t);
                    if (v != null) {
                        verifyErrors++;
                        out.println("VERIFY " + name + ": " + oneLine(v));
                        String details = v.getMessage();
                        if (verifyErrors <= DETAILED_VERIFY_ERRORS && details != null
                                && details.contains("\n")) {
                            out.println(indent(details));
                        }
                    } else {
                        otherFailures++;
                        if (otherFailures <= MAX_OTHER_LINES) {
                            out.println("OTHER " + name + ": " + oneLine(t));
                        } else if (otherFailures == MAX_OTHER_LINES + 1) {
                            out.println("OTHER ... (further failures not listed)");
                        }
                    }
                }
            }
        } catch (IOException e) {
            err.println("VerifyClasses: " + e);
            return 2;
        }

        out.println(args[0] + ": classes=" + names.size() + " verified=" + verified
                + " verify_errors=" + verifyErrors + " other_failures=" + otherFailures);
        return verifyErrors == 0 ? 0 : 1;
    }

    /** The VerifyError or ClassFormatError in t's cause chain, or null. */
    private static Throwable verifyFailure(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof VerifyError || c instanceof ClassFormatError) {
                return c;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return null;
    }

    /**
     * The first line of t, plus HotSpot's "Location:" and "Reason:" details when present, e.g.
     * {@code java.lang.VerifyError: Bad type on operand stack [at Foo.f()I @3: ireturn; Type long
     * (current frame, stack[0]) is not assignable to integer]}.
     */
    private static String oneLine(Throwable t) {
        String msg = t.getMessage();
        if (msg == null) {
            return t.getClass().getName();
        }
        String[] lines = msg.split("\\R");
        StringBuilder sb = new StringBuilder(t.getClass().getName()).append(": ").append(lines[0].trim());
        String location = lineAfter(lines, "Location:");
        String reason = lineAfter(lines, "Reason:");
        if (location != null || reason != null) {
            sb.append(" [");
            if (location != null) {
                sb.append("at ").append(location);
            }
            if (location != null && reason != null) {
                sb.append("; ");
            }
            if (reason != null) {
                sb.append(reason);
            }
            sb.append(']');
        }
        return sb.toString();
    }

    private static String lineAfter(String[] lines, String header) {
        for (int i = 0; i + 1 < lines.length; i++) {
            if (lines[i].trim().equals(header)) {
                return lines[i + 1].trim();
            }
        }
        return null;
    }

    private static String indent(String text) {
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("\\R")) {
            sb.append("    ").append(line).append('\n');
        }
        return sb.toString().stripTrailing();
    }

    private static boolean wanted(String entry) {
        if (!entry.endsWith(".class") || entry.startsWith("META-INF/")) {
            return false;
        }
        String base = entry.substring(entry.lastIndexOf('/') + 1);
        return !base.equals("module-info.class") && !base.equals("package-info.class");
    }

    private static String className(String entry) {
        return entry.substring(0, entry.length() - ".class".length()).replace('/', '.');
    }

    private static List<String> classesInJar(Path jar) throws IOException {
        List<String> names = new ArrayList<>();
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements(); ) {
                ZipEntry entry = e.nextElement();
                if (!entry.isDirectory() && wanted(entry.getName())) {
                    names.add(className(entry.getName()));
                }
            }
        }
        Collections.sort(names);
        return names;
    }

    private static List<String> classesInDirectory(Path dir) throws IOException {
        List<String> names = new ArrayList<>();
        try (Stream<Path> files = Files.walk(dir)) {
            files.filter(Files::isRegularFile).forEach(p -> {
                String entry = dir.relativize(p).toString().replace(File.separatorChar, '/');
                if (wanted(entry)) {
                    names.add(className(entry));
                }
            });
        }
        Collections.sort(names);
        return names;
    }
}
