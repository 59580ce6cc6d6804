import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.spi.ToolProvider;

/**
 * Runs the JDK's command-line tools (javap, javac) one request after another in one JVM, through
 * {@link ToolProvider}: what the tests' helper tests/support/toolserver.py starts once per test process, instead of
 * one JVM per tool run (~0.3 s of CPU each for a small javap).
 *
 * <p>Input, per request: a line with the number N of arguments, a line with the tool's name, then N lines, one
 * argument each (no argument holds a line break). Output, per request: a line {@code EXIT OUTLEN ERRLEN} (the
 * tool's exit status, the byte lengths of what it printed on its output and its error stream, UTF-8), then
 * those bytes, output first. An unknown tool exits 2 with a message. End of input ends the server.
 */
public final class ToolServer {
    private ToolServer() {}

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        for (String count; (count = in.readLine()) != null; ) {
            if (count.isEmpty()) continue;
            String name = in.readLine();
            String[] toolArgs = new String[Integer.parseInt(count)];
            for (int i = 0; i < toolArgs.length; i++) toolArgs[i] = in.readLine();
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            int code;
            try (PrintWriter po = new PrintWriter(new OutputStreamWriter(o, StandardCharsets.UTF_8));
                 PrintWriter pe = new PrintWriter(new OutputStreamWriter(e, StandardCharsets.UTF_8))) {
                Optional<ToolProvider> tool = ToolProvider.findFirst(name);
                if (tool.isPresent()) {
                    code = tool.get().run(po, pe, toolArgs);
                } else {
                    pe.println("ToolServer: no tool named " + name);
                    code = 2;
                }
            }
            byte[] ob = o.toByteArray();
            byte[] eb = e.toByteArray();
            out.write((code + " " + ob.length + " " + eb.length + "\n").getBytes(StandardCharsets.US_ASCII));
            out.write(ob);
            out.write(eb);
            out.flush();
        }
    }
}
