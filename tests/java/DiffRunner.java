import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TimeZone;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The differential runner: calls methods reflectively on textual arguments and prints what happened, so the
 * same calls can be made on two class trees (or compared with peggy-jvm's IR interpreter) and the transcripts
 * diffed. tests/difftest.py is its Python side.
 *
 * <pre>
 *   java -Xverify:all -cp CLASSES:HARNESS DiffRunner CLASS METHOD DESCRIPTOR  &lt; lines of ARGS
 *   java -Xverify:all -cp CLASSES:HARNESS DiffRunner --batch  &lt; lines of CLASS METHOD DESCRIPTOR ARGS
 * </pre>
 *
 * Input: one call per line, fields separated by single spaces; CLASS in internal ({@code a/b/C}) or binary
 * form, ARGS one encoded value per parameter. A line {@code !reset} makes the following calls use a fresh class
 * loader (over the same class path), so the classes are loaded and initialized again and no static state
 * survives; empty lines are ignored. All input is read before the first call; the called code sees an empty
 * System.in. A static method is called directly; an instance method on an object made by the class's no-arg
 * constructor (which counts as part of the call). Private members are reached with setAccessible(true).
 *
 * <p>Output, per call: {@code OUT <text>} (what the call printed on System.out, if anything), {@code ERR <text>}
 * (System.err, if anything), then exactly one of {@code RET <value>} ({@code RET} alone for void),
 * {@code THROW <exception class>} (internal form; also for errors loading or initializing the class, e.g.
 * VerifyError), {@code TIMEOUT} (the call's thread used more than {@code -Ddiff.timeout=MS} of CPU time, default
 * 5000, or, blocked, took {@link #WALL_FACTOR} times as long in wall-clock time; its thread is stopped and later
 * calls run on a new one; a call the worker thread had not yet taken by then never runs, and a call uses the
 * class loader of its group whenever it runs: Runner.Call) or {@code ERROR <text>} (the request itself was bad: no such class or method, an
 * unparsable argument). Calls run one at a time on one worker thread. The timeout counts CPU time so that a
 * call's outcome does not depend on the machine's load: on a loaded machine a call that returns at once
 * could take longer than its timeout in wall-clock time, waiting for a core.
 *
 * <p>The value encoding (arguments and results):
 * <pre>
 *   int, long, short, byte, char, boolean   decimal (char: its UTF-16 code unit; boolean: 1 or 0)
 *   float / double                          f:0x%08x / d:0x%016x, the raw bits (floatToRawIntBits)
 *   String                                  s:TEXT   (chars 0x21..0x7e verbatim except \ , { }; "\\" is a
 *                                                     backslash; any other char is \\uXXXX, per UTF-16 unit)
 *   null                                    null
 *   array                                   DESC:E1,E2,...  DESC the array descriptor ([I, [Ljava/lang/String;);
 *                                                     an element that is itself an array is wrapped in {...}
 *   boxed primitive (result only)           box:C:V   C the primitive descriptor char, V its encoding
 *   any other object (result only)          obj:CLASS  (internal name; a hidden class without its /0x... suffix)
 * </pre>
 * Deterministic: nothing printed depends on identity hash codes, addresses or timing (except whether a
 * call reached the timeout).
 *
 * <p>Exit status: 0 when every call was answered; 2 for bad usage; 3 when the harness itself failed (e.g.
 * OutOfMemoryError while parsing an argument): the answers so far are written, and stderr says which call and
 * why. A JVM that the code under test ends (System.exit) writes the answers so far and says so on stderr too.
 *
 * <p>Server mode ({@code java -Xverify:all -Xss4m -cp HARNESS DiffRunner --serve}): one JVM answers many
 * batches, one after another, so a test process pays one JVM start instead of one per batch. Per batch the
 * input is a line {@code BATCH <timeout ms>}, a line holding the batch's class path (entries separated by the
 * platform's path separator, what {@code -cp} held for a batch JVM), the batch's lines as for {@code --batch},
 * and a line {@code END}; the output is the batch's answers as above, then {@code DONE keep} or
 * {@code DONE exit <reason>}. Every batch starts from what a fresh JVM gives it: its calls load the classes
 * under test in class loaders of their own over the batch's class path (a fresh one at each {@code !reset}, and
 * one for the batch's start), so every class under test is loaded, verified and initialized ({@code <clinit>})
 * anew and no static field survives the batch; the calls run on a worker thread of the batch (its context class
 * loader a loader over the batch's class path, as the application loader is in a batch JVM), with System.in
 * empty and System.out/err captured per call as above. What a batch could leave behind in the JVM itself ends
 * the server after the batch ({@code DONE exit}; the next batch gets a fresh JVM): a call stopped at its
 * timeout (Thread.stop may leave a JDK class half-initialized or a lock broken), a call whose outcome is an
 * Error other than AssertionError (StackOverflowError, OutOfMemoryError, a LinkageError: the JDK's own
 * classes may then be unusable, e.g. every later string concatenation throwing NoClassDefFoundError), a thread
 * the batch started still alive at its end, and a change to the JVM's global settings (system properties,
 * default locale and time zone, the default uncaught-exception handler, System.in, the security manager).
 * A JVM the code under test ends, or a harness failure, ends the server as it ends a batch JVM (exit status as
 * above, the answers so far written without {@code DONE}). End of input ends the server.
 */
public final class DiffRunner {
    private DiffRunner() {}

    private static final PrintStream REAL_OUT = System.out;
    private static final PrintStream REAL_ERR = System.err;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** a call blocked (sleeping, waiting) uses no CPU: it times out after this many times its timeout */
    static final long WALL_FACTOR = 20;
    /** how often the worker thread's CPU time is read while a call runs */
    private static final long POLL_MS = 20;

    /** A request that cannot be carried out (bad class/method name, bad argument text). */
    static final class BadRequest extends Exception {
        BadRequest(String message) { super(message); }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--serve")) {
            serve();
            return;
        }
        List<String> lines = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) lines.add(line);
        }
        System.setIn(new ByteArrayInputStream(new byte[0]));
        String prefix;
        if (args.length == 1 && args[0].equals("--batch")) {
            prefix = null;
        } else if (args.length == 3) {
            prefix = args[0] + " " + args[1] + " " + args[2];
        } else {
            REAL_ERR.println("usage: DiffRunner CLASS METHOD DESCRIPTOR < args-lines"
                             + " | DiffRunner --batch < call-lines | DiffRunner --serve < batches");
            System.exit(2);
            return;
        }
        long timeout = Long.getLong("diff.timeout", 5000L);
        installExitHook();
        Runner runner = new Runner(timeout, classPathUrls(System.getProperty("java.class.path")), null);
        try {
            runLines(runner, lines, prefix);
            out.flush();
        } catch (Throwable t) {
            try {
                runner.stopWorker();  // a call still running may hold the heap the report needs
            } catch (Throwable ignored) {
                // reported below all the same
            }
            harnessFailure(out, t);
        }
        current = null;
        System.exit(0);  // threads a called method left running must not keep the JVM alive
    }

    /** The answers, on the real standard output (System.out is the call's capture while a call runs). */
    private static final BufferedWriter out = new BufferedWriter(
        new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8), 1 << 16);

    /**
     * The code under test may end the JVM (System.exit): say so, with the call, on the real stderr (the call's
     * own is captured), after the answers so far.
     */
    private static void installExitHook() {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            String call = current;
            if (call == null) return;
            try {
                out.flush();
            } catch (IOException e) {
                // the answers so far are lost; the message below still says why the JVM ended
            }
            REAL_ERR.println("DiffRunner: the JVM exited during call " + answered + " (System.exit or halt by the"
                             + " code under test?): " + brief(call));
            REAL_ERR.flush();
        }));
    }

    /** Makes the calls of one batch (its lines, {@code !reset} among them) and writes their answers. */
    private static void runLines(Runner runner, List<String> lines, String prefix) throws IOException {
        answered = 0;
        for (String line : lines) {
            if (line.isEmpty()) continue;
            if (line.equals("!reset")) {
                runner.reset();
                continue;
            }
            String call = prefix == null ? line : prefix + " " + line;
            current = call;
            for (String result : runner.call(call)) {
                out.write(result);
                out.write('\n');
            }
            current = null;
            answered++;
        }
    }

    /** Server mode (class comment): batches from stdin, one after another, each as a batch JVM would run it. */
    private static void serve() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(new FileInputStream(FileDescriptor.in),
                                                                     StandardCharsets.UTF_8), 1 << 16);
        System.setIn(new ByteArrayInputStream(new byte[0]));
        installExitHook();
        for (String head; (head = in.readLine()) != null; ) {
            if (head.isEmpty()) continue;
            if (!head.startsWith("BATCH ")) {
                REAL_ERR.println("DiffRunner --serve: expected BATCH <timeout ms>, got: " + brief(head));
                System.exit(2);
            }
            long timeout = Long.parseLong(head.substring(6).trim());
            String classPath = in.readLine();
            List<String> lines = new ArrayList<>();
            String line;
            while ((line = in.readLine()) != null && !line.equals("END")) lines.add(line);
            if (classPath == null || line == null) {
                REAL_ERR.println("DiffRunner --serve: the input ended inside a batch");
                System.exit(2);
            }
            Set<Long> threadsBefore = threadIds();
            GlobalState before = GlobalState.now();
            URL[] urls = classPathUrls(classPath);
            Runner runner = new Runner(timeout, urls, new URLClassLoader(urls, ClassLoader.getPlatformClassLoader()));
            try {
                runLines(runner, lines, null);
                runner.close();
            } catch (Throwable t) {
                try {
                    runner.stopWorker();
                } catch (Throwable ignored) {
                    // reported below all the same
                }
                harnessFailure(out, t);
            }
            String reason = runner.taint;
            if (reason == null) reason = threadsLeft(threadsBefore, runner.workers);
            if (reason == null) reason = before.changedIn(GlobalState.now());
            out.write(reason == null ? "DONE keep\n" : "DONE exit " + escape(reason) + "\n");
            out.flush();
            if (reason != null) System.exit(0);
        }
        System.exit(0);
    }

    private static Set<Long> threadIds() {
        Set<Long> ids = new HashSet<>();
        for (long id : THREADS.getAllThreadIds()) ids.add(id);
        return ids;
    }

    /** null, or which thread the batch started (other than its own worker threads) is still alive */
    private static String threadsLeft(Set<Long> before, Set<Long> workers) {
        for (long id : THREADS.getAllThreadIds()) {
            if (before.contains(id) || workers.contains(id)) continue;
            ThreadInfo info = THREADS.getThreadInfo(id);
            if (info != null) return "a thread the batch started is still running: " + info.getThreadName();
        }
        return null;
    }

    /** The JVM-wide settings a called method could change for every later batch (server mode). */
    static final class GlobalState {
        private final Properties properties;
        private final List<Object> settings;

        private GlobalState(Properties properties, List<Object> settings) {
            this.properties = properties;
            this.settings = settings;
        }

        @SuppressWarnings({"deprecation", "removal"})
        static GlobalState now() {
            List<Object> settings = new ArrayList<>();
            settings.add(Locale.getDefault());
            settings.add(Locale.getDefault(Locale.Category.FORMAT));
            settings.add(Locale.getDefault(Locale.Category.DISPLAY));
            settings.add(TimeZone.getDefault().getID());
            settings.add(Thread.getDefaultUncaughtExceptionHandler());
            settings.add(System.in);
            settings.add(System.getSecurityManager());
            return new GlobalState((Properties) System.getProperties().clone(), settings);
        }

        /** null when nothing changed, else what did */
        String changedIn(GlobalState later) {
            if (!properties.equals(later.properties)) return "the batch changed the system properties";
            for (int i = 0; i < settings.size(); i++) {
                if (!Objects.equals(settings.get(i), later.settings.get(i))) {
                    return "the batch changed a global setting (" + i + ": " + settings.get(i) + " -> "
                           + later.settings.get(i) + ")";
                }
            }
            return null;
        }
    }

    /** a call's line cut to its first 200 characters (its arguments can be megabytes) */
    private static String brief(String call) {
        return call == null || call.length() <= 200 ? call : call.substring(0, 200) + "...";
    }

    /** calls answered so far, and the one being made (null between calls): for the messages of a failed run */
    private static volatile int answered;
    private static volatile String current;

    /**
     * The harness itself failed (an error outside any called code's outcome, typically OutOfMemoryError while
     * parsing an argument or finding a method, or in this thread while a timed-out call still holds the heap):
     * the answers so far are written, the error goes to the real stderr with the call it happened in, and the
     * exit status is 3. Thrown out of main instead, its trace would go to the call's captured System.err and
     * the buffered answers would be lost: exit 1 with nothing on stdout or stderr.
     */
    private static void harnessFailure(BufferedWriter out, Throwable t) {
        String call = current;
        current = null;  // the shutdown hook need not repeat it
        System.setOut(REAL_OUT);
        System.setErr(REAL_ERR);
        try {
            out.flush();
        } catch (Throwable e) {
            // the answers so far are lost; the message below still says why the run ended
        }
        REAL_ERR.println("DiffRunner: harness failure after " + answered + " answered calls, in call: " + brief(call));
        t.printStackTrace(REAL_ERR);
        REAL_ERR.flush();
        System.exit(3);
    }

    private static URL[] classPathUrls(String classPath) throws IOException {
        String[] entries = classPath.split(File.pathSeparator);
        URL[] urls = new URL[entries.length];
        for (int i = 0; i < entries.length; i++) urls[i] = new File(entries[i]).toURI().toURL();
        return urls;
    }

    static final class Runner {
        private final long timeout;
        private final URL[] classPath;
        /** the worker threads' context class loader; null: the JVM's (the application class loader) */
        private final ClassLoader contextLoader;
        /** the current state group's class loader and method table (a new pair at every reset); a call is bound
         *  to the pair in force when it is made (Call), never to whatever the runner holds when it runs */
        private ClassLoader loader;
        private Map<String, Method> methods;
        private final List<URLClassLoader> loaders = new ArrayList<>();
        private ExecutorService executor;
        private Thread worker;
        /** the ids of every worker thread this runner made (server mode: not threads the batch left behind); the
         *  executor may make one from a dying worker's thread, hence a concurrent set */
        final Set<Long> workers = ConcurrentHashMap.newKeySet();
        /** null, or why the JVM may not be as a fresh one after these calls (server mode: the server ends) */
        String taint;

        Runner(long timeout, URL[] classPath, ClassLoader contextLoader) {
            this.timeout = timeout;
            this.classPath = classPath;
            this.contextLoader = contextLoader;
            reset();
        }

        void reset() {
            // the platform loader as parent: the classes under test are defined anew by every loader
            URLClassLoader fresh = new URLClassLoader(classPath, ClassLoader.getPlatformClassLoader());
            loaders.add(fresh);
            loader = fresh;
            methods = new HashMap<>();
        }

        /** Ends the worker thread (waiting for it) and closes the class loaders: the batch is over. */
        void close() throws IOException, InterruptedException {
            if (executor != null) {
                executor.shutdown();
                executor.awaitTermination(5, TimeUnit.SECONDS);
                if (worker != null) worker.join(5000);
                if (worker != null && worker.isAlive()) taint = "the worker thread did not end";
                executor = null;
                worker = null;
            }
            for (URLClassLoader l : loaders) l.close();
            if (contextLoader instanceof URLClassLoader) ((URLClassLoader) contextLoader).close();
            loaders.clear();
        }

        /** Notes an outcome that may have left the JDK's own state broken (server mode: the server ends). */
        private void noteOutcome(Throwable t) {
            if (taint == null && t instanceof Error && !(t instanceof AssertionError)) {
                taint = "a call's outcome was " + t.getClass().getName();
            }
        }

        List<String> call(String line) {
            List<String> result = new ArrayList<>();
            String[] f = line.split(" ", -1);
            if (f.length < 3) {
                result.add("ERROR " + escape("expected CLASS METHOD DESCRIPTOR ARGS...: " + line));
                return result;
            }
            String className = f[0].replace('/', '.');
            String name = f[1];
            String descriptor = f[2];
            ByteArrayOutputStream outBuf = new ByteArrayOutputStream();
            ByteArrayOutputStream errBuf = new ByteArrayOutputStream();
            Call body = new Call(loader, methods, className, name, descriptor, f);
            PrintStream capOut = new PrintStream(outBuf, true, StandardCharsets.UTF_8);
            PrintStream capErr = new PrintStream(errBuf, true, StandardCharsets.UTF_8);
            System.setOut(capOut);
            System.setErr(capErr);
            boolean finished = runWithTimeout(body);
            capOut.flush();
            capErr.flush();
            System.setOut(REAL_OUT);
            System.setErr(REAL_ERR);
            String printed = outBuf.toString(StandardCharsets.UTF_8);
            String errors = errBuf.toString(StandardCharsets.UTF_8);
            if (!printed.isEmpty()) result.add("OUT " + escape(printed));
            if (!errors.isEmpty()) result.add("ERR " + escape(errors));
            result.add(!finished ? "TIMEOUT" : body.outcome != null ? body.outcome : "ERROR internal-failure");
            return result;
        }

        /**
         * One call as handed to the worker thread. It is bound when it is made to the class loader and method table
         * of its state group, and it runs at most once, and only if the harness has not given up on it first
         * ({@link #claim}): the harness moves on to the next call, and to the next group's fresh loader, as soon
         * as it gives up, so a call that started later would run amid the calls after it. That happened: on a
         * loaded machine a worker thread may not even take its next call before the call's wall-clock timeout;
         * stopping that idle thread (as the harness did) killed the executor's thread in its queue instead of the
         * call, the executor started a new thread, and that thread ran the timed-out call afterwards, reading the
         * runner's loader of that moment: a later group's. Sync.staticIncr(942412569) reported TIMEOUT and then
         * ran in Sync.blockOnClass's loader, which answered 942412569 for blockOnClass(0) (session 17).
         */
        private final class Call implements Runnable {
            private final ClassLoader loader;
            private final Map<String, Method> methods;
            private final String className;
            private final String name;
            private final String descriptor;
            private final String[] f;
            /** 0 not started, 1 started (by {@link #thread}), 2 given up on before it started: never runs */
            final AtomicInteger claim = new AtomicInteger();
            volatile Thread thread;
            /** the CPU time of {@link #thread} when the call started */
            volatile long cpu0;
            volatile String outcome;
            /** the call has returned (its thread is the executor's again: not to be stopped) */
            volatile boolean done;

            Call(ClassLoader loader, Map<String, Method> methods, String className, String name, String descriptor,
                 String[] f) {
                this.loader = loader;
                this.methods = methods;
                this.className = className;
                this.name = name;
                this.descriptor = descriptor;
                this.f = f;
            }

            @Override
            public void run() {
                Thread me = Thread.currentThread();
                cpu0 = cpuNanos(me);
                thread = me;  // before the claim: the harness reads it once the claim is taken
                if (!claim.compareAndSet(0, 1)) return;
                outcome = invoke(loader, methods, className, name, descriptor, f);
                done = true;
            }

            /** CPU time the call has used so far; 0 before it started, -1 where the JVM does not measure it */
            long cpuUsed() {
                Thread t = thread;
                if (claim.get() != 1 || t == null) return 0;
                long now = cpuNanos(t);
                return now < 0 || cpu0 < 0 ? -1 : now - cpu0;
            }

            /** The harness gives up on the call: if it has not started it never will, else its thread is stopped. */
            void abandon() {
                if (!claim.compareAndSet(0, 2) && !done) stop(thread);
            }
        }

        /** Runs the call on the worker thread (made once, and again after a timeout). */
        private boolean runWithTimeout(Call body) {
            if (executor == null) {
                executor = Executors.newSingleThreadExecutor(r -> {
                    Thread t = new Thread(null, r, "diff-call", 0);
                    t.setDaemon(true);
                    if (contextLoader != null) t.setContextClassLoader(contextLoader);
                    worker = t;
                    workers.add(t.getId());
                    return t;
                });
            }
            long limit = TimeUnit.MILLISECONDS.toNanos(timeout);
            long start = System.nanoTime();
            Future<?> f = executor.submit(body);
            try {
                while (true) {
                    try {
                        f.get(Math.min(POLL_MS, timeout), TimeUnit.MILLISECONDS);
                        return true;
                    } catch (TimeoutException e) {
                        long cpu = body.cpuUsed();
                        long wall = System.nanoTime() - start;
                        if ((cpu < 0 ? wall : cpu) >= limit || wall >= limit * WALL_FACTOR) {
                            if (taint == null) taint = "a call timed out (its thread was stopped)";
                            // the call's own thread, not the executor's idle one (see Call); the executor is
                            // dropped either way: a thread it still has may be stopped or stalled
                            body.abandon();
                            executor.shutdownNow();
                            executor = null;
                            worker = null;
                            return false;
                        }
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (ExecutionException e) {  // not the called code's outcome (invoke() returns that): main reports it
                throw new IllegalStateException(e.getCause());
            }
        }

        /** Stops the call running on the worker thread, if any (the harness failed around it). */
        void stopWorker() {
            if (worker != null && worker.isAlive()) stop(worker);
        }

        /** CPU time of thread {@code t} in nanoseconds; -1 where the JVM does not measure it. */
        private static long cpuNanos(Thread t) {
            return THREADS.isThreadCpuTimeSupported() ? THREADS.getThreadCpuTime(t.getId()) : -1;
        }

        @SuppressWarnings({"deprecation", "removal"})
        private static void stop(Thread t) {
            t.stop();
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private String invoke(ClassLoader loader, Map<String, Method> methods, String className, String name,
                              String descriptor, String[] f) {
            Method m;
            Class<?> cls;
            try {
                try {
                    cls = Class.forName(className, false, loader);
                } catch (ClassNotFoundException e) {
                    return "ERROR " + escape("no class " + className);
                }
                m = find(methods, cls, name, descriptor);
            } catch (BadRequest e) {
                return "ERROR " + escape(e.getMessage());
            } catch (LinkageError e) {  // e.g. VerifyError while linking: what any caller would see
                noteOutcome(e);
                return "THROW " + internal(e.getClass());
            }
            Class<?>[] types = m.getParameterTypes();
            if (f.length - 3 != types.length) {
                return "ERROR " + escape("expected " + types.length + " arguments, got " + (f.length - 3));
            }
            Object[] values = new Object[types.length];
            try {
                for (int i = 0; i < types.length; i++) values[i] = parse(f[3 + i], types[i]);
            } catch (BadRequest e) {
                return "ERROR " + escape(e.getMessage());
            }
            try {
                Class.forName(className, true, loader);  // initialization failures are the call's outcome
                Object receiver = null;
                if (!Modifier.isStatic(m.getModifiers())) {
                    Constructor<?> c = cls.getDeclaredConstructor();
                    c.setAccessible(true);
                    receiver = c.newInstance();
                }
                Object value = m.invoke(receiver, values);
                return m.getReturnType() == void.class ? "RET" : "RET " + encode(value, m.getReturnType());
            } catch (InvocationTargetException e) {
                noteOutcome(e.getCause());
                return "THROW " + internal(e.getCause().getClass());
            } catch (NoSuchMethodException e) {
                return "ERROR " + escape("no no-arg constructor in " + className);
            } catch (ReflectiveOperationException e) {
                return "ERROR " + escape(e.toString());
            } catch (Throwable e) {  // linkage and initialization errors, stack overflow in the constructor, ...
                noteOutcome(e);
                return "THROW " + internal(e.getClass());
            }
        }

        private static Method find(Map<String, Method> methods, Class<?> cls, String name, String descriptor)
                throws BadRequest {
            String key = cls.getName() + " " + name + " " + descriptor;
            Method m = methods.get(key);
            if (m != null) return m;
            for (Method candidate : cls.getDeclaredMethods()) {
                if (candidate.getName().equals(name) && descriptor(candidate).equals(descriptor)) {
                    candidate.setAccessible(true);
                    methods.put(key, candidate);
                    return candidate;
                }
            }
            throw new BadRequest("no method " + name + descriptor + " in " + cls.getName());
        }
    }

    // -- descriptors and names ----------------------------------------------------------------------------
    static String descriptor(Method m) {
        StringBuilder sb = new StringBuilder("(");
        for (Class<?> p : m.getParameterTypes()) sb.append(descriptor(p));
        return sb.append(')').append(descriptor(m.getReturnType())).toString();
    }

    static String descriptor(Class<?> c) {
        if (c.isPrimitive()) {
            if (c == int.class) return "I";
            if (c == long.class) return "J";
            if (c == float.class) return "F";
            if (c == double.class) return "D";
            if (c == boolean.class) return "Z";
            if (c == byte.class) return "B";
            if (c == char.class) return "C";
            if (c == short.class) return "S";
            return "V";
        }
        if (c.isArray()) return c.getName().replace('.', '/');
        return "L" + c.getName().replace('.', '/') + ";";
    }

    static String internal(Class<?> c) {
        String n = c.getName().replace('.', '/');
        int hidden = n.indexOf("/0x");
        return hidden >= 0 ? n.substring(0, hidden) : n;
    }

    // -- the value encoding ------------------------------------------------------------------------------
    static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                sb.append("\\\\");
            } else if (c >= 0x21 && c <= 0x7e && c != ',' && c != '{' && c != '}') {
                sb.append(c);
            } else {
                sb.append(String.format("\\u%04x", (int) c));
            }
        }
        return sb.toString();
    }

    static String unescape(String s) throws BadRequest {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\') {
                sb.append(c);
            } else if (i + 1 < s.length() && s.charAt(i + 1) == '\\') {
                sb.append('\\');
                i++;
            } else if (i + 5 < s.length() && s.charAt(i + 1) == 'u') {
                try {
                    sb.append((char) Integer.parseInt(s.substring(i + 2, i + 6), 16));
                } catch (NumberFormatException e) {
                    throw new BadRequest("bad escape in " + s);
                }
                i += 5;
            } else {
                throw new BadRequest("bad escape in " + s);
            }
        }
        return sb.toString();
    }

    static String encode(Object v, Class<?> declared) {
        if (declared.isPrimitive()) return encodePrimitive(v, declared);
        if (v == null) return "null";
        if (v instanceof String) return "s:" + escape((String) v);
        Class<?> c = v.getClass();
        Class<?> prim = unboxed(c);
        if (prim != null) return "box:" + descriptor(prim) + ":" + encodePrimitive(v, prim);
        if (c.isArray()) {
            Class<?> comp = c.getComponentType();
            StringBuilder sb = new StringBuilder(descriptor(c)).append(':');
            int n = Array.getLength(v);
            for (int i = 0; i < n; i++) {
                if (i > 0) sb.append(',');
                Object e = Array.get(v, i);
                if (!comp.isPrimitive() && e != null && e.getClass().isArray()) {
                    sb.append('{').append(encode(e, comp)).append('}');
                } else {
                    sb.append(encode(e, comp));
                }
            }
            return sb.toString();
        }
        return "obj:" + internal(c);
    }

    static Class<?> unboxed(Class<?> c) {
        if (c == Integer.class) return int.class;
        if (c == Long.class) return long.class;
        if (c == Float.class) return float.class;
        if (c == Double.class) return double.class;
        if (c == Boolean.class) return boolean.class;
        if (c == Byte.class) return byte.class;
        if (c == Character.class) return char.class;
        if (c == Short.class) return short.class;
        return null;
    }

    static String encodePrimitive(Object v, Class<?> type) {
        if (type == float.class) return String.format("f:0x%08x", Float.floatToRawIntBits((Float) v));
        if (type == double.class) return String.format("d:0x%016x", Double.doubleToRawLongBits((Double) v));
        if (type == boolean.class) return ((Boolean) v) ? "1" : "0";
        if (type == char.class) return Integer.toString((Character) v);
        return v.toString();  // int, long, short, byte
    }

    static Object parse(String text, Class<?> type) throws BadRequest {
        try {
            if (type == int.class) return Integer.parseInt(text);
            if (type == long.class) return Long.parseLong(text);
            if (type == short.class) return Short.parseShort(text);
            if (type == byte.class) return Byte.parseByte(text);
            if (type == char.class) {
                int c = Integer.parseInt(text);
                if (c < 0 || c > 0xFFFF) throw new BadRequest("char out of range: " + text);
                return (char) c;
            }
            if (type == boolean.class) {
                if (text.equals("1")) return true;
                if (text.equals("0")) return false;
                throw new BadRequest("boolean must be 1 or 0: " + text);
            }
            if (type == float.class) return Float.intBitsToFloat(Integer.parseUnsignedInt(bits(text, "f:0x"), 16));
            if (type == double.class) return Double.longBitsToDouble(Long.parseUnsignedLong(bits(text, "d:0x"), 16));
        } catch (NumberFormatException e) {
            throw new BadRequest("bad " + type + " argument: " + text);
        }
        if (text.equals("null")) return null;
        if (type == String.class || (type == Object.class && text.startsWith("s:"))) {
            if (!text.startsWith("s:")) throw new BadRequest("expected s:TEXT or null: " + text);
            return unescape(text.substring(2));
        }
        if (type.isArray()) {
            String desc = descriptor(type);
            if (!text.startsWith(desc + ":")) throw new BadRequest("expected " + desc + ":...: " + text);
            List<String> items = splitElements(text.substring(desc.length() + 1));
            Class<?> comp = type.getComponentType();
            Object array = Array.newInstance(comp, items.size());
            for (int i = 0; i < items.size(); i++) {
                String item = items.get(i);
                if (item.startsWith("{") && item.endsWith("}")) item = item.substring(1, item.length() - 1);
                Array.set(array, i, parse(item, comp));
            }
            return array;
        }
        throw new BadRequest("cannot make an argument of type " + type.getName() + " from " + text);
    }

    private static String bits(String text, String prefix) throws BadRequest {
        if (!text.startsWith(prefix)) throw new BadRequest("expected " + prefix + "...: " + text);
        return text.substring(prefix.length());
    }

    /** Top-level comma-separated elements; commas inside {...} belong to nested arrays. */
    static List<String> splitElements(String s) throws BadRequest {
        List<String> out = new ArrayList<>();
        if (s.isEmpty()) return out;
        int depth = 0;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '{') depth++;
            else if (c == '}') depth--;
            else if (c == ',' && depth == 0) {
                out.add(s.substring(start, i));
                start = i + 1;
            }
            if (depth < 0) throw new BadRequest("unbalanced braces: " + s);
        }
        if (depth != 0) throw new BadRequest("unbalanced braces: " + s);
        out.add(s.substring(start));
        return out;
    }
}
