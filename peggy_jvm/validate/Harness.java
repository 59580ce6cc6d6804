/*
 * peggy-jvm validate: the JVM side of the counterexample check (peggy_jvm/validate/counterexample.py).
 *
 * Usage: java -cp <cache dir> Harness ORIG_CP OPT_CP < calls
 * ORIG_CP and OPT_CP are class-path strings (directories or jars, separated by the path separator); each call
 * loads both class trees afresh, in two class loaders whose parent is the platform loader, so the two versions
 * never see each other's classes or static state.
 *
 * A call is one line: GROUP \t BUDGET_MS \t ORIG_CLASS \t OPT_CLASS \t NAME \t DESCRIPTOR \t OPT_DESCRIPTOR \t TOKEN ...
 * (OPT_DESCRIPTOR: the method's descriptor in OPT, where --map may have renamed the classes it names)
 * The harness is a server: it prints READY once it is up, then answers each line as it reads it, so one JVM
 * serves a whole validate run. GROUP names the method pair the call belongs to (for the caller: the harness
 * does not read it); BUDGET_MS is what that pair's budget has left when the line is sent, counted from the
 * moment the line is read: each run gets at most the smaller of harness.timeout and what is left of it, and a
 * run with nothing left is not started (BUDGET). After a run that timed out (its thread cannot be stopped and
 * would keep a core busy) the harness answers that call and exits; the caller starts a new JVM for what follows.
 *
 * Non-termination (harness.hangFactor F, harness.hangFloor L ms; the caller's HANG_FACTOR and HANG_FLOOR_MS):
 * a side still running after max(L, F * t) ms where the other returned or threw in t ms is evidence that it does
 * not terminate on that input. So that the rule can fire whatever t is, OPT's run after ORIG finished in t ms may
 * take up to max(harness.timeout, that wait), and when ORIG is still running after its harness.timeout and OPT
 * then finishes in t ms, ORIG is waited for until it has run max(L, F * t) ms (both within BUDGET_MS). OPT then
 * runs only as long as such a t can be waited for within BUDGET_MS: longer, nothing could come of it (ORIG's
 * outcome is TIMEOUT), and two threads would spin meanwhile. A run once stopped stays TIMEOUT even if it ends
 * during that longer wait.
 *
 * NAME is a static method, an instance method (called on a receiver allocated without a constructor, whose
 * fields named by F tokens are set, or on one built by the constructor a K token names) or <init> (a
 * constructor: the object it builds is the outcome). Tokens: the arguments, then F<name>=<token> for each
 * receiver field, or K<constructor descriptor> and C<token> for each of its arguments. Argument tokens:
 * integers in decimal (char and boolean too), float/double as the decimal value of their raw bits, N for null, S
 * followed by the UTF-16 code units in hex separated by '.', A followed by array elements separated by '|' (in a
 * row of a two-dimensional array by '~'; there ^K is the very row object K of the same array), @K for the very
 * object of token K (arguments, then fields or constructor arguments: aliasing), P for a plain object (Plain; for
 * an interface parameter a stub implementing it), Q for an object whose toString() returns null (NullString; for
 * an interface a stub whose toString() returns null too), R (interfaces only) for a stub whose toString() returns
 * null and whose methods returning an interface or Object return such an object in turn (a NullString for Object),
 * V followed by a name for a JDK object libraryValue builds (a Class, a Throwable, a boxed number, a Locale).
 *
 * Answer, one line per call: OUT \t <orig outcome> \t <opt outcome> \t <orig outcome, second run> \t <ms>
 * \t <ms of ORIG's first run> \t <ms of OPT's run> (a run stopped for time: how long it was waited for).
 * ORIG runs twice (fresh loaders each time), so a result that depends on identity hash codes (Object.toString
 * of a generated object, an array printed) shows as ORIG disagreeing with itself; where ORIG's and OPT's outcomes
 * are the same text, ORIG does not run again and its second outcome is "SAME". OPT runs even when ORIG's
 * run timed out (then ORIG does not run again). An outcome is "R <value>"
 * ("R V" for a constructor), "T <exception class>", "TIMEOUT", "BUDGET" (not run: the pair's budget was spent),
 * "SKIPPED" (not run: an earlier run of the call did not finish) or "ERROR <what>", followed by " ;args=" and
 * the arguments' state after the call, for a receiver or a built object ";this=" and its instance fields
 * (name=value|..., sorted by name), ";static0=" the static fields of the class under test once it is initialized,
 * before the call runs, and ";static=" those the call changed with their values after it (both name=value|...,
 * sorted by name: the caller compares the changes only where the two versions started from the same statics),
 * and ";out=" and what the call printed on System.out (hex); for a receiver a constructor built, last
 * ";this0=" and its state before the call (instance fields as for ";this=", but an array met again as #K, the
 * K-th array met, and an object that is no string, boxed value or array as ?; then '/' and the static fields),
 * also after "TIMEOUT" (? when it was the constructor that did not finish). Values: integers
 * decimal, float/double as raw bits with every NaN written NaN, N, S..., arrays as [desc elements separated by
 * ','], an object of the class under test Oself (the two versions' classes may be named apart), other objects
 * O<class>.
 */
import java.io.*;
import java.lang.reflect.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class Harness {
    static final long TIMEOUT_MS = Long.getLong("harness.timeout", 2000L);
    /** System.out between runs (a run's own printing goes to its capture from its start to its last await) */
    static final PrintStream IDLE_OUT = System.out;

    public static void main(String[] argv) throws Exception {
        URL[] orig = urls(argv[0]), opt = urls(argv[1]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream realOut = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        warmUp();
        realOut.println("READY"); // the caller counts a pair's budget from here, not from the JVM's start
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] g = line.split("\t", -1);
            long start = System.nanoTime(), end = start + Long.parseLong(g[1]) * 1_000_000L;
            String[] f = Arrays.copyOfRange(g, 2, g.length);
            Run a = run(orig, f[0], f[3], f, capMs(TIMEOUT_MS, end)), b = null;
            if (a.alive()) {
                // after ORIG timed out OPT still runs: OPT returning where ORIG does not is a difference too, when
                // ORIG is then waited for as long as the hang rule asks of the time OPT took. ORIG's stopped run
                // is the only other outcome, so OPT's run shows something only if it ends within what lets ORIG
                // then be waited for hangFactor times as long before the call's end: OPT runs no longer than
                // that (not the full harness.timeout, while ORIG's thread keeps a core busy as well)
                b = run(opt, f[1], f[4], f, capMs(Math.min(TIMEOUT_MS, usefulFastMs(a, end)), end));
                if (!b.alive() && b.finished()) a.await(capMs(hangWaitMs(b.ms()) - a.ms(), end));
            } else if (ran(a.outcome())) {
                // OPT may run as long as the hang rule asks of the time ORIG took, so that the rule can fire
                long cap = a.finished() ? Math.max(TIMEOUT_MS, hangWaitMs(a.ms())) : TIMEOUT_MS;
                b = run(opt, f[1], f[4], f, capMs(cap, end));
            }
            String oa = a.outcome(), ob = b == null ? "SKIPPED" : b.outcome(), again = "SKIPPED";
            if (ran(oa) && ran(ob)) {
                // ORIG's second run only tells whether a difference is ORIG's own nondeterminism: where the two
                // agree there is none to tell (a third of the JVM's runs in a validate run saved)
                again = oa.equals(ob) ? "SAME" : run(orig, f[0], f[3], f, capMs(TIMEOUT_MS, end)).outcome();
            }
            realOut.println("OUT\t" + oa + "\t" + ob + "\t" + again + "\t" + (System.nanoTime() - start) / 1_000_000
                    + "\t" + a.ms() + "\t" + (b == null ? 0 : b.ms()));
            if (runaway) break;
        }
        realOut.flush();
        System.exit(0); // a call that timed out may still be running on its thread
    }

    /** One call of warmUp(int) the way calls are run (class loaders, reflection, a thread, the encoding), before
     *  READY: what a JVM does the first time costs it ~0.1 s, paid here while the caller is still busy. */
    static void warmUp() {
        try {
            URL[] self = {Harness.class.getProtectionDomain().getCodeSource().getLocation()};
            String[] f = {"Harness", "Harness", "warmUp", "(I)I", "(I)I", "1"};
            run(self, "Harness", "(I)I", f, TIMEOUT_MS).outcome();
        } catch (Throwable t) {
            // no warm-up: the first call pays for it
        }
    }

    static int warmUp(int x) {
        return x + 1;
    }

    /** The hang rule (counterexample.py's runs_on): a side still running after max(floor, factor * t) ms where
     *  the other finished in t ms does not terminate on that input, as far as a test can tell. */
    static final long HANG_FACTOR = Long.getLong("harness.hangFactor", 100L);
    static final long HANG_FLOOR_MS = Long.getLong("harness.hangFloor", 1000L);

    static long hangWaitMs(long fastMs) {
        return Math.max(HANG_FLOOR_MS, HANG_FACTOR * fastMs) + 1; // + 1: a wait is measured in whole ms
    }

    /** For a run still going after its cap: the longest time t the other side may take so that the hang rule can
     *  still fire, i.e. the stopped run can be waited for until it has run hangWaitMs(t) before endNs (0: none,
     *  then the other side is not run: its outcome could show nothing). */
    static long usefulFastMs(Run slow, long endNs) {
        long total = slow.ms() + (endNs - System.nanoTime()) / 1_000_000; // what the slow run can reach in all
        if (total < hangWaitMs(0)) return 0;
        return (total - 1) / HANG_FACTOR; // hangWaitMs(t) <= total for every t up to this
    }

    /** At most ms, and no further than the call's end (0 or less: nothing left). */
    static long capMs(long ms, long endNs) {
        return Math.min(ms, (endNs - System.nanoTime()) / 1_000_000);
    }

    static URL[] urls(String cp) throws Exception {
        List<URL> out = new ArrayList<>();
        for (String p : cp.split(File.pathSeparator)) if (!p.isEmpty()) out.add(new File(p).toURI().toURL());
        return out.toArray(new URL[0]);
    }

    /** A call's thread outlived its time limit: it still runs, so the JVM must go after answering. */
    static boolean runaway;

    static boolean ran(String outcome) {
        return !outcome.startsWith("TIMEOUT") && !outcome.startsWith("BUDGET") && !outcome.startsWith("SKIPPED");
    }

    /** One version's run of a call, started and waited for up to capMs (nothing left: not run, BUDGET). */
    static Run run(URL[] cp, String cls, String desc, String[] f, long capMs) {
        if (capMs <= 0) return Run.known("BUDGET");
        Run r = start(cp, cls, desc, f);
        r.await(capMs);
        return r;
    }

    /** One version's run of a call, set up and started on its own thread (or its outcome known at once: an
     *  ERROR while setting it up). */
    static Run start(URL[] cp, String cls, String desc, String[] f) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Object[] args;
        Executable m;
        Class<?> c;
        List<Field> fields = new ArrayList<>();
        List<Object> fieldValues = new ArrayList<>();
        Constructor<?> ctor = null;
        List<Object> ctorArgs = new ArrayList<>();
        try {
            URLClassLoader loader = new URLClassLoader(cp, ClassLoader.getPlatformClassLoader());
            c = Class.forName(cls.replace('/', '.'), false, loader);
            m = find(c, f[2], desc);
            if (m == null) return Run.known("ERROR no method");
            m.setAccessible(true);
            Class<?>[] ps = m.getParameterTypes();
            List<Object> vals = new ArrayList<>(); // arguments, then fields: what @K refers to
            args = new Object[ps.length];
            int k = 0;
            for (int t = 5; t < f.length; t++) {
                String tok = f[t];
                if (tok.startsWith("K")) { // the receiver is built by this constructor
                    ctor = (Constructor<?>) find(c, "<init>", tok.substring(1));
                    if (ctor == null) return Run.known("ERROR no constructor");
                    ctor.setAccessible(true);
                    continue;
                }
                if (tok.startsWith("C")) { // an argument of that constructor
                    if (ctor == null || ctorArgs.size() == ctor.getParameterCount()) {
                        return Run.known("ERROR argument count");
                    }
                    String v = tok.substring(1);
                    Object value = v.startsWith("@") ? vals.get(Integer.parseInt(v.substring(1)))
                            : decode(ctor.getParameterTypes()[ctorArgs.size()], v, 0);
                    vals.add(value);
                    ctorArgs.add(value);
                    continue;
                }
                if (tok.startsWith("F")) { // a receiver field: F<name>=<token>
                    int eq = tok.indexOf('=');
                    Field fd = declared(c, tok.substring(1, eq));
                    String v = tok.substring(eq + 1);
                    Object value = fd == null ? null
                            : v.startsWith("@") ? vals.get(Integer.parseInt(v.substring(1))) : decode(fd.getType(), v, 0);
                    vals.add(value);
                    if (fd != null) {
                        fd.setAccessible(true);
                        fields.add(fd);
                        fieldValues.add(value);
                    }
                    continue;
                }
                if (k == ps.length) return Run.known("ERROR argument count");
                args[k] = tok.startsWith("@") ? vals.get(Integer.parseInt(tok.substring(1))) : decode(ps[k], tok, 0);
                vals.add(args[k++]);
            }
            if (k != ps.length || ctor != null && ctorArgs.size() != ctor.getParameterCount()) {
                return Run.known("ERROR argument count");
            }
        } catch (Throwable t) {
            return Run.known("ERROR " + t.getClass().getName());
        }
        final Executable fm = m;
        final Class<?> fc = c;
        final Object[] fargs = args;
        final Constructor<?> fctor = ctor;
        final Object[] fctorArgs = ctorArgs.toArray();
        // the built receiver's state before the call, set by the call's thread (read also when it runs on)
        final java.util.concurrent.atomic.AtomicReference<String> before =
                new java.util.concurrent.atomic.AtomicReference<>();
        final String[] result = new String[1];
        final Object[] self = new Object[1];
        final Map<String, String> staticsBefore = new TreeMap<>();
        final java.util.concurrent.atomic.AtomicLong done = new java.util.concurrent.atomic.AtomicLong();
        Thread th = new Thread(() -> {
            try {
                Object r;
                // initialized here, as the call itself would first (an initializer's exception is its outcome),
                // so that the statics before the call are those its own code starts from
                Class.forName(fc.getName(), true, fc.getClassLoader());
                staticsBefore.putAll(staticsOf(fc));
                if (fm instanceof Constructor) {
                    r = ((Constructor<?>) fm).newInstance(fargs);
                    self[0] = r;
                    result[0] = "R V";
                } else if (Modifier.isStatic(fm.getModifiers())) {
                    r = ((Method) fm).invoke(null, fargs);
                    result[0] = "R " + encode(r, fc);
                } else {
                    if (fctor != null) {
                        Object built;
                        try {
                            built = fctor.newInstance(fctorArgs);
                        } catch (InvocationTargetException e) { // no receiver: not the method's outcome
                            result[0] = "ERROR the constructor threw " + e.getCause().getClass().getName();
                            return;
                        }
                        self[0] = built;
                        staticsBefore.clear(); // the call starts from the statics the constructor left
                        staticsBefore.putAll(staticsOf(fc));
                        before.set(stateOf(built, fc, false) + "/" + stateOf(null, fc, true));
                    } else {
                        self[0] = allocate(fc);
                        for (int i = 0; i < fields.size(); i++) fields.get(i).set(self[0], fieldValues.get(i));
                    }
                    r = ((Method) fm).invoke(self[0], fargs);
                    result[0] = "R " + encode(r, fc);
                }
            } catch (InvocationTargetException e) {
                Throwable t = e.getCause();
                result[0] = "T " + t.getClass().getName().replace('.', '/');
            } catch (ExceptionInInitializerError e) {
                result[0] = "T java/lang/ExceptionInInitializerError";
            } catch (Throwable t) {
                result[0] = "ERROR " + t.getClass().getName();
            } finally {
                done.set(System.nanoTime());
            }
        });
        th.setDaemon(true);
        Run run = new Run(th, result, self, staticsBefore, before, buf, fargs, c, ctor != null, done);
        // its printing captured from its first instruction: set only in await(), a call that printed at once
        // while this thread waited for a core (a loaded machine) printed to the real stdout, and its outcome
        // said it printed nothing (test_validate.py's `hello` once read "returns" instead of "prints")
        System.setOut(new PrintStream(buf, true));
        th.start();
        return run;
    }

    /** A run: waited for in steps (its thread cannot be stopped), then answered. */
    static final class Run {
        final Thread th;
        final String[] result;
        final Object[] self;
        final Map<String, String> staticsBefore;
        final java.util.concurrent.atomic.AtomicReference<String> before;
        final ByteArrayOutputStream buf;
        final Object[] fargs;
        final Class<?> c;
        final boolean built; // its receiver is built by a constructor
        final long startNs = System.nanoTime();
        final java.util.concurrent.atomic.AtomicLong doneNs; // when its thread ended (0: still running)
        String known; // an outcome known without running (set up failed, or nothing left of the budget)
        boolean stopped; // once waited for and still running: answered TIMEOUT whatever it does later

        Run(Thread th, String[] result, Object[] self, Map<String, String> staticsBefore,
            java.util.concurrent.atomic.AtomicReference<String> before, ByteArrayOutputStream buf, Object[] fargs,
            Class<?> c, boolean built, java.util.concurrent.atomic.AtomicLong doneNs) {
            this.th = th; this.result = result; this.self = self; this.staticsBefore = staticsBefore;
            this.before = before; this.buf = buf; this.fargs = fargs; this.c = c; this.built = built;
            this.doneNs = doneNs;
        }

        static Run known(String outcome) {
            Run r = new Run(null, null, null, null, null, null, null, null, false, null);
            r.known = outcome;
            return r;
        }

        /** Wait up to ms for the run to end (its printing captured meanwhile); nothing left: not run (BUDGET)
         *  unless it already ran. */
        void await(long ms) {
            if (th == null) return;
            if (ms <= 0) {
                if (th.isAlive()) stopped = true;
                return;
            }
            System.setOut(new PrintStream(buf, true));
            try {
                th.join(ms);
            } catch (InterruptedException e) {
                // fall through: reported as a timeout
            } finally {
                System.setOut(IDLE_OUT);
            }
            if (th.isAlive()) stopped = true;
        }

        boolean alive() {
            return th != null && th.isAlive();
        }

        /** It returned or threw (its own outcome, not a set-up error or a stop). */
        boolean finished() {
            String o = outcome();
            return o.startsWith("R ") || o.startsWith("T ");
        }

        /** How long it ran (until now when it still runs). */
        long ms() {
            if (th == null) return 0;
            long end = doneNs.get() != 0 ? doneNs.get() : System.nanoTime();
            return (end - startNs) / 1_000_000;
        }

        String outcome() {
            if (known != null) return known;
            if (stopped) {
                // a run once stopped stays stopped: what it prints after may have gone into another run's capture
                if (th.isAlive()) runaway = true;
                if (!built) return "TIMEOUT";
                // a constructor that did not finish built no receiver: a state (?) that is like no other
                return "TIMEOUT;this0=" + (before.get() == null ? "?" : before.get());
            }
            if (th.isAlive()) return "TIMEOUT"; // never waited for: not reached
            StringBuilder sb = new StringBuilder(result[0]);
            sb.append(" ;args=");
            for (Object a : fargs) sb.append(encode(a, c)).append(' ');
            if (self[0] != null) sb.append(";this=").append(fieldsOf(self[0], c));
            if (!staticsBefore.isEmpty()) {
                Map<String, String> after = staticsOf(c), changed = new TreeMap<>();
                for (Map.Entry<String, String> e : after.entrySet()) {
                    if (!e.getValue().equals(staticsBefore.get(e.getKey()))) changed.put(e.getKey(), e.getValue());
                }
                sb.append(";static0=").append(joined(staticsBefore)).append(";static=").append(joined(changed));
            }
            sb.append(";out=");
            for (byte x : buf.toByteArray()) sb.append(String.format("%02x", x & 0xff));
            if (before.get() != null) sb.append(";this0=").append(before.get());
            return sb.toString();
        }
    }

    /** A built receiver's instance fields (or the class's static fields) before the call, sorted by name, as
     *  name=value|...: an array met before (in a field or as a row) is #K, the K-th array met, so that two
     *  versions' receivers compare equal only when they share arrays alike; an object the encoding cannot show
     *  whole (its state could differ where its class name does not) is ?. */
    static String stateOf(Object o, Class<?> c, boolean statics) {
        TreeMap<String, Field> byName = new TreeMap<>();
        for (Field fd : c.getDeclaredFields()) {
            if (Modifier.isStatic(fd.getModifiers()) == statics) byName.put(fd.getName(), fd);
        }
        Map<Object, Integer> seen = new IdentityHashMap<>();
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Field> e : byName.entrySet()) {
            if (sb.length() > 0) sb.append('|');
            sb.append(e.getKey()).append('=');
            try {
                e.getValue().setAccessible(true);
                sb.append(shared(e.getValue().get(o), seen));
            } catch (Throwable t) {
                sb.append('?');
            }
        }
        return sb.toString();
    }

    static String shared(Object v, Map<Object, Integer> seen) {
        if (v == null || !v.getClass().isArray()) {
            String e = encode(v, null);
            return e.startsWith("O") ? "?" : e; // a string or boxed value is shown whole, another object is not
        }
        Integer k = seen.get(v);
        if (k != null) return "#" + k;
        seen.put(v, seen.size());
        StringBuilder sb = new StringBuilder("[").append(v.getClass().getName().replace('.', '/'));
        int n = Array.getLength(v);
        for (int i = 0; i < n; i++) sb.append(i == 0 ? " " : ",").append(shared(Array.get(v, i), seen));
        return sb.append(']').toString();
    }

    /** An instance of c made without running a constructor (its fields at their defaults). */
    static Object allocate(Class<?> c) throws Exception {
        Field uf = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
        uf.setAccessible(true);
        Object unsafe = uf.get(null);
        return unsafe.getClass().getMethod("allocateInstance", Class.class).invoke(unsafe, c);
    }

    static Field declared(Class<?> c, String name) {
        try {
            Field fd = c.getDeclaredField(name);
            return Modifier.isStatic(fd.getModifiers()) ? null : fd;
        } catch (NoSuchFieldException e) {
            return null; // not in this version of the class: left at its default
        }
    }

    /** The instance fields c declares, by name: name=value|... (sorted: the two versions may order them apart). */
    static String fieldsOf(Object o, Class<?> c) {
        return joined(declaredFields(o, c, false));
    }

    /** The static fields c declares, by name (c initialized: reading them runs no code). */
    static Map<String, String> staticsOf(Class<?> c) {
        return declaredFields(null, c, true);
    }

    /** The instance (or static) fields c declares, by name, encoded. */
    static Map<String, String> declaredFields(Object o, Class<?> c, boolean statics) {
        TreeMap<String, String> out = new TreeMap<>();
        for (Field fd : c.getDeclaredFields()) {
            if (Modifier.isStatic(fd.getModifiers()) != statics) continue;
            try {
                fd.setAccessible(true);
                out.put(fd.getName(), encode(fd.get(o), c));
            } catch (Throwable t) {
                out.put(fd.getName(), "ERROR");
            }
        }
        return out;
    }

    static String joined(Map<String, String> out) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, String> e : out.entrySet()) {
            if (sb.length() > 0) sb.append('|');
            sb.append(e.getKey()).append('=').append(e.getValue());
        }
        return sb.toString();
    }

    static Executable find(Class<?> c, String name, String desc) {
        if (name.equals("<init>")) {
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                if (descriptorOf(k.getParameterTypes(), void.class).equals(desc)) return k;
            }
            return null;
        }
        for (Method m : c.getDeclaredMethods()) {
            if (m.getName().equals(name) && descriptorOf(m.getParameterTypes(), m.getReturnType()).equals(desc)) return m;
        }
        return null;
    }

    static String descriptorOf(Class<?>[] params, Class<?> ret) {
        StringBuilder d = new StringBuilder("(");
        for (Class<?> p : params) d.append(descriptor(p));
        return d.append(')').append(descriptor(ret)).toString();
    }

    static String descriptor(Class<?> c) {
        if (c.isArray()) return c.getName().replace('.', '/');
        if (c == int.class) return "I";
        if (c == long.class) return "J";
        if (c == float.class) return "F";
        if (c == double.class) return "D";
        if (c == boolean.class) return "Z";
        if (c == char.class) return "C";
        if (c == short.class) return "S";
        if (c == byte.class) return "B";
        if (c == void.class) return "V";
        return "L" + c.getName().replace('.', '/') + ";";
    }

    static Object decode(Class<?> t, String tok, int depth) {
        if (t == int.class) return Integer.parseInt(tok);
        if (t == long.class) return Long.parseLong(tok);
        if (t == short.class) return (short) Integer.parseInt(tok);
        if (t == byte.class) return (byte) Integer.parseInt(tok);
        if (t == char.class) return (char) Integer.parseInt(tok);
        if (t == boolean.class) return Integer.parseInt(tok) != 0;
        if (t == float.class) return Float.intBitsToFloat((int) Long.parseLong(tok));
        if (t == double.class) return Double.longBitsToDouble(Long.parseLong(tok));
        if (tok.equals("N")) return null;
        if (tok.equals("P")) return t.isInterface() ? stub(t, false) : new Plain();
        if (tok.equals("Q")) return t.isInterface() ? stub(t, true) : new NullString();
        if (tok.equals("R")) return t.isInterface() ? deepStub(t, 0) : new NullString();
        if (tok.startsWith("V")) {
            Object v = libraryValue(tok.substring(1));
            if (!t.isInstance(v)) throw new IllegalArgumentException("library value " + tok + " for " + t);
            return v;
        }
        if (tok.startsWith("S") && t.isAssignableFrom(String.class)) {
            String body = tok.substring(1);
            StringBuilder sb = new StringBuilder();
            if (!body.isEmpty()) for (String u : body.split("\\.")) sb.append((char) Integer.parseInt(u, 16));
            return sb.toString();
        }
        if (t.isArray()) {
            String body = tok.substring(1);
            String[] items = body.isEmpty() ? new String[0] : body.split(depth == 0 ? "\\|" : "~", -1);
            Object arr = Array.newInstance(t.getComponentType(), items.length);
            for (int i = 0; i < items.length; i++) {
                Object item = items[i].startsWith("^") ? Array.get(arr, Integer.parseInt(items[i].substring(1)))
                        : decode(t.getComponentType(), items[i], depth + 1);
                Array.set(arr, i, item);
            }
            return arr;
        }
        throw new IllegalArgumentException("parameter type " + t);
    }

    /** The JDK objects a V token names (counterexample.py's _LIBRARY_VALUES), each built afresh. */
    static Object libraryValue(String name) {
        switch (name) {
            case "class-Object": return Object.class;
            case "class-String": return String.class;
            case "class-int": return int.class;
            case "class-int[]": return int[].class;
            case "class-Runnable": return Runnable.class;
            case "runtime": return new RuntimeException("m");
            case "checked": return new Exception("m");
            case "null-string-runtime": return new NullStringRuntimeException();
            case "null-string-checked": return new NullStringException();
            case "int-0": return Integer.valueOf(0);
            case "int-1": return Integer.valueOf(1);
            case "int--1": return Integer.valueOf(-1);
            case "int-min": return Integer.valueOf(Integer.MIN_VALUE);
            case "int-max": return Integer.valueOf(Integer.MAX_VALUE);
            case "long-0": return Long.valueOf(0L);
            case "long-1": return Long.valueOf(1L);
            case "long--1": return Long.valueOf(-1L);
            case "long-min": return Long.valueOf(Long.MIN_VALUE);
            case "long-max": return Long.valueOf(Long.MAX_VALUE);
            case "boolean-false": return Boolean.FALSE;
            case "boolean-true": return Boolean.TRUE;
            case "char-0": return Character.valueOf((char) 0);
            case "char-a": return Character.valueOf('a');
            case "double-0": return Double.valueOf(0.0);
            case "double-1": return Double.valueOf(1.0);
            case "double-nan": return Double.valueOf(Double.NaN);
            case "double--0": return Double.valueOf(-0.0);
            case "locale-root": return java.util.Locale.ROOT;
            case "locale-en-us": return java.util.Locale.US;
            case "locale-fr-ca": return java.util.Locale.CANADA_FRENCH;
            default: throw new IllegalArgumentException("library value " + name);
        }
    }

    /** A RuntimeException whose toString() returns null (a message built by string conversion shows "null"). */
    static final class NullStringRuntimeException extends RuntimeException {
        NullStringRuntimeException() {
            super("m");
        }

        @Override
        public String toString() {
            return null;
        }

        @Override
        public int hashCode() {
            return 5;
        }
    }

    /** A checked Exception whose toString() returns null. */
    static final class NullStringException extends Exception {
        NullStringException() {
            super("m");
        }

        @Override
        public String toString() {
            return null;
        }

        @Override
        public int hashCode() {
            return 6;
        }
    }

    /** An object whose toString() returns null: string conversion then gives "null" (JLS 5.1.11). */
    static final class NullString {
        @Override
        public String toString() {
            return null;
        }

        @Override
        public int hashCode() {
            return 1; // not the identity hash: the same in every run
        }
    }

    /** A plain object, but with the same hash code in every run (Object's own differs between runs). */
    static final class Plain {
        @Override
        public String toString() {
            return "Plain";
        }

        @Override
        public int hashCode() {
            return 2;
        }
    }

    /** An implementation of interface t whose methods return null, false or zero (toString() too when
     *  nullString, else "Stub"), with a fixed hash code; equals is identity. */
    static Object stub(Class<?> t, boolean nullString) {
        InvocationHandler h = (proxy, m, a) -> {
            int n = m.getParameterCount();
            if (m.getName().equals("toString") && n == 0) return nullString ? null : "Stub";
            if (m.getName().equals("hashCode") && n == 0) return 3;
            if (m.getName().equals("equals") && n == 1) return proxy == a[0];
            Class<?> r = m.getReturnType();
            if (r == boolean.class) return false;
            if (r == int.class) return 0;
            if (r == long.class) return 0L;
            if (r == double.class) return 0.0;
            if (r == float.class) return 0.0f;
            if (r == char.class) return (char) 0;
            if (r == short.class) return (short) 0;
            if (r == byte.class) return (byte) 0;
            return null;
        };
        ClassLoader loader = t.getClassLoader() != null ? t.getClassLoader() : Harness.class.getClassLoader();
        return java.lang.reflect.Proxy.newProxyInstance(loader, new Class<?>[] {t}, h);
    }

    /** How deep the objects returned by a deep stub's methods are stubs again (then null). */
    static final int DEEP_STUB_LEVELS = 4;

    /** A stub of interface t as stub(t, true), except that its methods returning an interface return a deep
     *  stub of that interface and those returning Object a NullString, to DEEP_STUB_LEVELS levels. */
    static Object deepStub(Class<?> t, int level) {
        InvocationHandler plain = java.lang.reflect.Proxy.getInvocationHandler(stub(t, true));
        InvocationHandler h = (proxy, m, a) -> {
            Class<?> r = m.getReturnType();
            boolean objectMethod = m.getDeclaringClass() == Object.class;
            if (!objectMethod && level < DEEP_STUB_LEVELS && r.isInterface()) return deepStub(r, level + 1);
            if (!objectMethod && level < DEEP_STUB_LEVELS && r == Object.class) return new NullString();
            return plain.invoke(proxy, m, a);
        };
        ClassLoader loader = t.getClassLoader() != null ? t.getClassLoader() : Harness.class.getClassLoader();
        return java.lang.reflect.Proxy.newProxyInstance(loader, new Class<?>[] {t}, h);
    }

    static String encode(Object v, Class<?> self) {
        if (v == null) return "N";
        if (v.getClass() == self) return "Oself"; // the class under test: --map may name the two versions apart
        if (java.lang.reflect.Proxy.isProxyClass(v.getClass())) return "Ostub"; // proxy class names differ from run to run
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) return v.toString();
        if (v instanceof Character) return Integer.toString((Character) v);
        if (v instanceof Boolean) return ((Boolean) v) ? "1" : "0";
        if (v instanceof Float) {
            float x = (Float) v;
            return Float.isNaN(x) ? "NaN" : Integer.toString(Float.floatToRawIntBits(x));
        }
        if (v instanceof Double) {
            double x = (Double) v;
            return Double.isNaN(x) ? "NaN" : Long.toString(Double.doubleToRawLongBits(x));
        }
        if (v instanceof String) {
            StringBuilder sb = new StringBuilder("S");
            String s = (String) v;
            for (int i = 0; i < s.length(); i++) sb.append(i == 0 ? "" : ".").append(Integer.toHexString(s.charAt(i)));
            return sb.toString();
        }
        if (v.getClass().isArray()) {
            StringBuilder sb = new StringBuilder("[").append(v.getClass().getName().replace('.', '/'));
            int n = Array.getLength(v);
            for (int i = 0; i < n; i++) sb.append(i == 0 ? " " : ",").append(encode(Array.get(v, i), self));
            return sb.append(']').toString();
        }
        return "O" + v.getClass().getName().replace('.', '/');
    }
}
