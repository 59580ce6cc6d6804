import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;

/**
 * Runs the {@code main} method of each named class in one JVM and prints what each printed, so a test can
 * compare an original and a rewritten class tree with two JVM start-ups instead of two per class.
 *
 * <pre>
 *   java -Xverify:all -cp CLASSES:HARNESS RunMains Name1 Name2 ...
 * </pre>
 *
 * For each class, in order: a line {@code === <name>}, everything it wrote to System.out and System.err
 * (both captured into one buffer, in the order written), then a line {@code === <name> end: ok} or
 * {@code === <name> end: threw <exception class>}. A VerifyError or any other failure to load is reported
 * the same way (as what it threw), so the caller sees it in the diff. Exit status 0.
 */
public class RunMains {
    public static void main(String[] args) throws Exception {
        PrintStream realOut = System.out;
        for (String name : args) {
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            PrintStream capture = new PrintStream(buffer, true, StandardCharsets.UTF_8);
            String outcome = "ok";
            System.setOut(capture);
            System.setErr(capture);
            try {
                Method m = Class.forName(name).getMethod("main", String[].class);
                m.invoke(null, (Object) new String[0]);
            } catch (InvocationTargetException e) {
                outcome = "threw " + e.getCause().getClass().getName();
            } catch (Throwable t) {
                outcome = "threw " + t.getClass().getName() + ": " + t.getMessage();
            } finally {
                capture.flush();
                System.setOut(realOut);
                System.setErr(realOut);
            }
            realOut.println("=== " + name);
            realOut.print(buffer.toString(StandardCharsets.UTF_8));
            realOut.println("=== " + name + " end: " + outcome);
        }
        realOut.flush();
    }
}
