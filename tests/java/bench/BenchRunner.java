import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The runtime benchmark's harness (driven by scripts/bench_runtime.py): times an original and an optimized class
 * of the same name against each other in one JVM.
 *
 * <pre>
 *   java [-Xint] [-Xverify:all] -cp HARNESS BenchRunner ORIG_DIR OPT_DIR CLASS
 *        [--warmup W] [--samples S] [--min-ms M] [--max-samples X] [--control] KERNEL:N ...
 * </pre>
 *
 * Each directory is read by its own URLClassLoader whose parent is the platform loader, so the two classes are
 * distinct (each is checked to come from its own loader) and share nothing but the JDK. For each kernel (a
 * public static method of CLASS, named KERNEL; its parameters are filled from their types: int = N, arrays of N
 * elements or N x N, a String of N letters, from a seed fixed per kernel and parameter) the harness calls the
 * original (A) and the optimized (B) method alternately, A first on even calls and B first on odd ones, each on
 * its own fresh copy of the same inputs, and measures the CPU time of this thread (ThreadMXBean) around each call.
 * The first W pairs are warm-up and not recorded; then pairs are recorded until there are at least S of them and
 * both sides together spent at least M ms, or X pairs were recorded. Every call's result (a number, or a string's
 * hash) must equal A's first result: the timing run is a differential test too.
 *
 * <p>{@code --control} adds a third side C: the original class again, through a third loader, timed like the
 * other two (the calls rotate A B C, B C A, C A B). C/A is an A/A ratio: what the noise of the machine alone makes
 * of identical code, the yardstick for reading B/A.
 *
 * <p>Output, one line per kernel (machine-readable, parsed by tests/support/bench_harness.py):
 * {@code KERNEL name=K n=N samples=S orig_ns=MEDIAN opt_ns=MEDIAN ratio=OPT/ORIG [ctl_ns=MEDIAN control=CTL/ORIG]
 * result=R}. On a difference: {@code MISMATCH name=K call=C orig=R1 opt|control=R2 expected=R}, exit 1; a kernel
 * that throws: {@code ERROR name=K side=orig|opt|control what=...}, exit 1. Bad usage (no such kernel, a parameter type it cannot fill, a class not found): a line
 * {@code USAGE ...} on stderr, exit 2.
 */
public final class BenchRunner {
    private static final long SEED = 0x5DEECE66DL;
    private static final String[] SIDES = {"orig", "opt", "control"};

    private BenchRunner() {}

    private static final class Usage extends Exception {
        Usage(String message) {
            super(message);
        }
    }

    public static void main(String[] args) throws Exception {
        try {
            System.exit(run(args));
        } catch (Usage u) {
            System.err.println("USAGE " + u.getMessage());
            System.exit(2);
        }
    }

    private static int run(String[] args) throws Exception {
        if (args.length < 3) {
            throw new Usage("BenchRunner ORIG_DIR OPT_DIR CLASS [options] KERNEL:N ...");
        }
        int warmup = 5;
        int samples = 15;
        long minNs = 0;
        int maxSamples = 1000;
        boolean withControl = false;
        List<String> kernels = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--control")) {
                withControl = true;
            } else if (a.startsWith("--")) {
                if (i + 1 >= args.length) {
                    throw new Usage("missing value for " + a);
                }
                long v = parse(args[++i], a);
                switch (a) {
                    case "--warmup": warmup = (int) v; break;
                    case "--samples": samples = (int) v; break;
                    case "--min-ms": minNs = v * 1_000_000L; break;
                    case "--max-samples": maxSamples = (int) v; break;
                    default: throw new Usage("unknown option " + a);
                }
            } else {
                kernels.add(a);
            }
        }
        Class<?> orig = load(args[0], args[2]);
        Class<?> opt = load(args[1], args[2]);
        Class<?> control = withControl ? load(args[0], args[2]) : null;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (!mx.isCurrentThreadCpuTimeSupported()) {
            throw new Usage("this JVM cannot measure the CPU time of a thread");
        }
        mx.setThreadCpuTimeEnabled(true);
        for (String spec : kernels) {
            int colon = spec.lastIndexOf(':');
            if (colon < 0) {
                throw new Usage("kernel " + spec + ": expected NAME:N");
            }
            String name = spec.substring(0, colon);
            int n = (int) parse(spec.substring(colon + 1), name);
            Method[] sides = control == null ? new Method[] {find(orig, name), find(opt, name)}
                    : new Method[] {find(orig, name), find(opt, name), find(control, name)};
            int rc = bench(mx, sides, name, n, warmup, samples, minNs, maxSamples);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    }

    private static long parse(String text, String what) throws Usage {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new Usage(what + ": not a number: " + text);
        }
    }

    private static Class<?> load(String dir, String name) throws Exception {
        URLClassLoader loader = new URLClassLoader(new URL[] {Path.of(dir).toUri().toURL()},
                ClassLoader.getPlatformClassLoader());
        Class<?> c;
        try {
            c = Class.forName(name, true, loader);
        } catch (ClassNotFoundException e) {
            throw new Usage("class " + name + " not found in " + dir);
        }
        if (c.getClassLoader() != loader) {
            throw new Usage("class " + name + " was not defined by the loader of " + dir);
        }
        return c;
    }

    private static Method find(Class<?> c, String name) throws Usage {
        for (Method m : c.getDeclaredMethods()) {
            if (m.getName().equals(name) && Modifier.isStatic(m.getModifiers())
                    && Modifier.isPublic(m.getModifiers())) {
                return m;
            }
        }
        throw new Usage("no public static method " + name + " in " + c.getName());
    }

    private static int bench(ThreadMXBean mx, Method[] sides, String name, int n, int warmup, int samples,
                             long minNs, int maxSamples) throws Exception {
        Object[] template = inputs(sides[0], name, n);
        int k = sides.length;
        long[] times = new long[k];
        Object[] results = new Object[k];
        List<List<Long>> ns = new ArrayList<>();
        for (int s = 0; s < k; s++) {
            ns.add(new ArrayList<>());
        }
        long spent = 0;
        long expected = 0;
        for (int call = 0; ; call++) {
            for (int slot = 0; slot < k; slot++) {
                // the rotations in turn: A first on even calls and B on odd ones; with C: A B C, B C A, C A B
                int side = (slot + call) % k;
                Object[] in = copy(template);
                long t0 = mx.getCurrentThreadCpuTime();
                Object r;
                try {
                    r = sides[side].invoke(null, in);
                } catch (InvocationTargetException e) {
                    System.out.println("ERROR name=" + name + " side=" + SIDES[side] + " what=" + e.getCause());
                    return 1;
                }
                times[side] = mx.getCurrentThreadCpuTime() - t0;
                results[side] = r;
            }
            if (call == 0) {
                expected = fold(results[0]);
            }
            for (int side = 0; side < k; side++) {
                if (fold(results[side]) != expected) {
                    System.out.println("MISMATCH name=" + name + " call=" + call + " orig=" + results[0] + " "
                            + SIDES[side] + "=" + results[side] + " expected=" + expected);
                    return 1;
                }
            }
            if (call >= warmup) {
                for (int side = 0; side < k; side++) {
                    ns.get(side).add(times[side]);
                    spent += times[side];
                }
                int have = ns.get(0).size();
                if ((have >= samples && spent >= minNs) || have >= maxSamples) {
                    break;
                }
            }
        }
        long mo = median(ns.get(0));
        long mb = median(ns.get(1));
        StringBuilder line = new StringBuilder("KERNEL name=" + name + " n=" + n + " samples=" + ns.get(0).size()
                + " orig_ns=" + mo + " opt_ns=" + mb + " ratio=" + ratio(mb, mo));
        if (k == 3) {
            long mc = median(ns.get(2));
            line.append(" ctl_ns=").append(mc).append(" control=").append(ratio(mc, mo));
        }
        System.out.println(line.append(" result=").append(Long.toHexString(expected)));
        return 0;
    }

    private static String ratio(long num, long den) {
        return den > 0 ? String.format("%.4f", (double) num / den) : "nan";
    }

    private static long median(List<Long> xs) {
        long[] v = xs.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(v);
        int h = v.length / 2;
        return v.length % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
    }

    /** A result as 64 bits: numbers exactly (doubles by their bits, NaNs folded), anything else by its string. */
    private static long fold(Object r) {
        if (r instanceof Double) {
            return Double.doubleToLongBits((Double) r);
        }
        if (r instanceof Float) {
            return Float.floatToIntBits((Float) r);
        }
        if (r instanceof Number) {
            return ((Number) r).longValue();
        }
        if (r instanceof Character) {
            return (Character) r;
        }
        if (r instanceof Boolean) {
            return (Boolean) r ? 1 : 0;
        }
        String s = String.valueOf(r);
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < s.length(); i++) {
            h = (h ^ s.charAt(i)) * 0x100000001b3L;
        }
        return h;
    }

    private static Object[] inputs(Method m, String name, int n) throws Usage {
        Class<?>[] types = m.getParameterTypes();
        Object[] out = new Object[types.length];
        for (int p = 0; p < types.length; p++) {
            SplittableRandom rnd = new SplittableRandom(SEED + 7919L * p);
            Class<?> t = types[p];
            if (t == int.class) {
                out[p] = n;
            } else if (t == int[].class) {
                out[p] = ints(rnd, n);
            } else if (t == int[][].class) {
                int[][] v = new int[n][];
                for (int i = 0; i < n; i++) {
                    v[i] = ints(rnd, n);
                }
                out[p] = v;
            } else if (t == double[].class) {
                out[p] = doubles(rnd, n);
            } else if (t == double[][].class) {
                double[][] v = new double[n][];
                for (int i = 0; i < n; i++) {
                    v[i] = doubles(rnd, n);
                }
                out[p] = v;
            } else if (t == byte[].class) {
                byte[] v = new byte[n];
                rnd.nextBytes(v);
                out[p] = v;
            } else if (t == String.class) {
                char[] v = new char[n];
                for (int i = 0; i < n; i++) {
                    v[i] = (char) ('a' + rnd.nextInt(26));
                }
                out[p] = new String(v);
            } else {
                throw new Usage("kernel " + name + ": cannot make an argument of type " + t.getName());
            }
        }
        return out;
    }

    private static int[] ints(SplittableRandom rnd, int n) {
        int[] v = new int[n];
        for (int i = 0; i < n; i++) {
            v[i] = rnd.nextInt(65536);
        }
        return v;
    }

    private static double[] doubles(SplittableRandom rnd, int n) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = rnd.nextDouble() * 2.0 - 1.0;
        }
        return v;
    }

    /** A deep copy of the arguments, so a kernel that writes its arrays leaves the template alone. */
    private static Object[] copy(Object[] template) {
        Object[] out = template.clone();
        for (int p = 0; p < out.length; p++) {
            Object v = out[p];
            if (v instanceof int[]) {
                out[p] = ((int[]) v).clone();
            } else if (v instanceof double[]) {
                out[p] = ((double[]) v).clone();
            } else if (v instanceof byte[]) {
                out[p] = ((byte[]) v).clone();
            } else if (v instanceof Object[]) {
                Object[] rows = ((Object[]) v).clone();
                for (int i = 0; i < rows.length; i++) {
                    rows[i] = rows[i] instanceof int[] ? ((int[]) rows[i]).clone() : ((double[]) rows[i]).clone();
                }
                out[p] = rows;
            }
        }
        return out;
    }
}
