// Purpose-written methods for tests/test_interp.py: every static method here is run by the IR interpreter and
// by the JVM (DiffRunner) on generated arguments and the results must agree. Each one exercises a corner of
// the IR's semantics: exception routing through nested try/catch/finally and handler order, exceptions the
// VM raises itself (NPE, AIOOBE, NegativeArraySize, ArrayStore, ClassCast, ArithmeticException,
// IllegalMonitorState), long and double edge arithmetic, long loops, recursion, monitors, narrowing stores,
// switches and static state. Every method must be fully modelled by the interpreter's default call handler
// (the test asserts that none is Unsupported), so they use only the library methods it models.
public class InterpEdges {
    static int counter;
    static final int[] TABLE = {3, 1, 4, 1, 5, 9, 2, 6};
    static final String GREETING = "hi";

    int value;
    InterpEdges next;

    static class Boom extends RuntimeException {
        final int code;
        Boom(int code) { super("boom" + code); this.code = code; }
    }

    static class Checked extends Exception {
        Checked(String m) { super(m); }
    }

    static void thrower(int mode) throws Checked {
        switch (mode & 7) {
            case 1: throw new Boom(1);
            case 2: throw new Checked("c2");
            case 3: throw new IllegalStateException("ise");
            case 4: { int[] a = new int[2]; a[mode] = 1; break; }      // AIOOBE (mode is 4, 12, ...)
            case 5: { Object o = null; o.hashCode(); break; }
            case 6: { int z = mode - mode; counter += 10 / z; break; }
            case 7: throw new Error("err");
            default: break;
        }
    }

    // nested try/catch/finally, the order of handlers, exceptions thrown from handlers and finally blocks
    static String nestedTry(int mode) {
        StringBuilder log = new StringBuilder();
        try {
            try {
                log.append('a');
                thrower(mode);
                log.append('b');
            } catch (Boom e) {
                log.append("boom").append(e.code);
                if (mode > 8) throw new IllegalArgumentException("from handler");
            } catch (ArithmeticException | ArrayIndexOutOfBoundsException e) {
                log.append("arith-or-bounds:").append(e.getClass().getName());
            } catch (RuntimeException e) {
                log.append("rt:").append(e.getClass().getSimpleName());
            } finally {
                log.append("|f1");
                if (mode == 3) throw new Boom(33);
            }
            log.append("|mid");
        } catch (Checked e) {
            log.append("|checked:").append(e.getMessage());
        } catch (Boom e) {
            log.append("|outer-boom").append(e.code);
        } catch (Throwable t) {
            log.append("|any:").append(t.getClass().getName());
        } finally {
            log.append("|f2");
        }
        return log.toString();
    }

    // the first matching handler wins even if a later one is more specific
    static int handlerOrder(int mode) {
        try {
            thrower(mode);
            return 0;
        } catch (RuntimeException e) {
            return e instanceof Boom ? 1 : e instanceof ArithmeticException ? 2 : 3;
        } catch (Exception e) {
            return 4;
        } catch (Throwable t) {
            return 5;
        }
    }

    @SuppressWarnings("finally")
    static int finallyWins(int x) {
        int r = 0;
        try {
            r = 100 / x;
            return r;
        } catch (ArithmeticException e) {
            r = -1;
            throw e;
        } finally {
            if (x < 0) return r * 2;
            counter++;
        }
    }

    static int fieldOnNull(int mode) {
        InterpEdges a = new InterpEdges();
        a.value = mode;
        if ((mode & 1) == 0) a.next = new InterpEdges();
        try {
            a.next.value = mode * 2;          // NPE when next is null
            return a.next.value + a.value;
        } catch (NullPointerException e) {
            return -a.value;
        }
    }

    static int fieldOnNullUncaught(int mode) {
        InterpEdges a = (mode & 1) == 0 ? new InterpEdges() : null;
        return a.value;
    }

    static int arrayIndex(int[] a, int i) {
        try {
            return a[i];
        } catch (ArrayIndexOutOfBoundsException e) {
            return a.length == 0 ? -1000 : -a.length;
        }
    }

    static int arrayStore(int[] a, int i, int v) {
        a[i] = v;                            // NPE or AIOOBE escape
        return a[i] + a.length;
    }

    static String arrayStoreCheck(int mode) {
        Object[] arr = (mode & 1) == 0 ? new String[2] : new Object[2];
        try {
            arr[0] = "s";
            arr[1] = (mode & 2) == 0 ? new Object() : null;
            return "stored " + arr.length;
        } catch (ArrayStoreException e) {
            return "ASE " + (arr[0] != null);
        }
    }

    static int negativeSize(int n) {
        try {
            int[][] m = new int[n & 3][n % 100];
            return m.length * 100 + (m.length > 0 ? m[0].length : 7);
        } catch (NegativeArraySizeException e) {
            return -1;
        }
    }

    static int partialMulti(int n) {
        int[][][] m = new int[n & 3][2][];
        int s = 0;
        for (int[][] plane : m) for (int[] row : plane) s += row == null ? 1 : 100;
        return s;
    }

    static String checkcast(int mode) {
        Object o;
        switch (mode & 3) {
            case 0: o = "text"; break;
            case 1: o = new int[3]; break;
            case 2: o = new StringBuilder("sb"); break;
            default: o = null;
        }
        try {
            String s = (String) o;
            return "ok:" + s;
        } catch (ClassCastException e) {
            return "cce:" + (o instanceof int[]) + (o instanceof CharSequence) + (o instanceof Object[]);
        }
    }

    static String divInTry(int a, int b) {
        try {
            int q = a / b;
            int r = a % b;
            return q + "," + r;
        } catch (ArithmeticException e) {
            return "div0:" + e.getMessage();
        }
    }

    static long longDivRem(long a, long b) {
        try {
            return (a / b) ^ (a % b) * 31;
        } catch (ArithmeticException e) {
            return Long.MIN_VALUE;
        }
    }

    static long longEdges(long a, long b) {
        long x = a * b + (a >>> 7) - (b >> 63) + (a << (b & 127));
        x ^= (a | b) & ~(a & b);
        int c = Long.compare(a, b) + (a < b ? 10 : 20);
        return x + c + (long) (int) a + (long) (short) b + (long) (char) a + (long) (byte) b;
    }

    static double doubleEdges(double a, double b) {
        double x = a * b + a / b - a % b;
        if (a < b) x += 1.5;
        if (a != a) x = -x;
        return x + (float) a - (long) b + (int) a;
    }

    static float floatEdges(float a, float b) {
        float x = a / b + a * b - a % b;
        return x + (float) (double) a + (long) b + (char) (int) a;
    }

    static int cmpMix(float a, double b) {
        int r = 0;
        if (a < b) r |= 1;
        if (a > b) r |= 2;
        if (a == b) r |= 4;
        if (!(a >= b)) r |= 8;
        if (!(a <= b)) r |= 16;
        return r | Double.compare(a, b) << 8;
    }

    static long longLoop(int n) {
        long s = 17;
        int k = n & 0x3FFF;                  // up to 16383 iterations
        for (int i = 0; i < k; i++) s = s * 6364136223846793005L + i;
        return s;
    }

    static int nestedLoops(int n) {
        int s = 0;
        int k = n & 127;
        for (int i = 0; i < k; i++)
            for (int j = i; j < k; j++)
                if (((i ^ j) & 3) == 0) s += i * j; else s -= j;
        return s;
    }

    // recursion through instance methods (so the generated inputs only reach the bounded entry points)
    long fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

    static long factOf(int n) { return new InterpEdges().fact(n & 31); }

    int ackermann(int m, int n) {
        if (m == 0) return n + 1;
        if (n == 0) return ackermann(m - 1, 1);
        return ackermann(m - 1, ackermann(m, n - 1));
    }

    static int ack(int m, int n) {
        InterpEdges e = new InterpEdges();
        return e.ackermann(m & 1, n & 15) + e.ackermann(2, n & 7);
    }

    boolean isEven(int n) { return n == 0 || isOdd(n - 1); }
    boolean isOdd(int n) { return n != 0 && isEven(n - 1); }

    static int parity(int n) { return new InterpEdges().isEven(n & 63) ? 2 : 1; }

    int down(int n) { return down(n + 1) + 1; }

    // unbounded recursion: the JVM and the model overflow at different depths, the caught outcome is the same
    static String stackOverflow(int n) {
        try {
            return "returned " + new InterpEdges().down(n);
        } catch (StackOverflowError e) {
            return "overflow " + n;
        }
    }

    static String sync(int mode) {
        Object lock = new Object();
        StringBuilder sb = new StringBuilder();
        try {
            synchronized (lock) {
                sb.append(Thread.holdsLock(lock));
                synchronized (lock) {
                    if ((mode & 1) == 1) throw new Boom(mode);
                    sb.append(',').append(Thread.holdsLock(lock));
                }
                if ((mode & 2) == 2) return sb.append(":ret").toString();
            }
        } catch (Boom e) {
            sb.append(":boom");
        }
        return sb.append(':').append(Thread.holdsLock(lock)).toString();
    }

    static synchronized int syncStatic(int v) {
        counter += v;
        return Thread.holdsLock(InterpEdges.class) ? counter : -1;
    }

    static int syncNull(int mode) {
        Object o = (mode & 1) == 0 ? new Object() : null;
        synchronized (o) {
            return 1;
        }
    }

    static int throwNull(int mode) {
        RuntimeException e = (mode & 1) == 0 ? new Boom(mode) : null;
        try {
            throw e;
        } catch (Boom b) {
            return b.code;
        } catch (NullPointerException n) {
            return -1;
        }
    }

    static int narrowing(int v) {
        byte[] b = new byte[1];
        char[] c = new char[1];
        short[] s = new short[1];
        boolean[] z = new boolean[2];
        b[0] = (byte) v;
        c[0] = (char) v;
        s[0] = (short) v;
        z[0] = (v & 1) == 1;
        z[1] = v > 0;
        return b[0] * 7 + c[0] * 3 + s[0] + (z[0] ? 1000 : 0) + (z[1] ? 10000 : 0);
    }

    static int switches(int v) {
        int r;
        switch (v) {
            case -1: r = 10; break;
            case 0: r = 20; break;
            case 1: r = 30;
            case 2: r = 40; break;
            case 3: r = 50; break;
            default: r = 60;
        }
        switch (v * 1000) {
            case -5000: r += 1; break;
            case 1000: r += 2; break;
            case 1000000: r += 3; break;
            case Integer.MIN_VALUE: r += 4; break;
            default: r += 5;
        }
        return r;
    }

    static int stringSwitch(String s) {
        if (s == null) return -1;
        switch (s) {
            case "": return 0;
            case "a": return 1;
            case "hello": return 2;
            case "Aa": return 3;
            case "BB": return 4;   // same hashCode as "Aa"
            default: return s.length() * 10;
        }
    }

    static String strings(String s) {
        if (s == null) return "null!";
        StringBuilder sb = new StringBuilder(s);
        sb.reverse().append('|').append(s.length()).append('|').append(s.hashCode());
        if (!s.isEmpty()) sb.append('|').append((int) s.charAt(0)).append(s.indexOf('l'));
        return sb.toString() + s.concat("!") + s.equals("abc") + GREETING;
    }

    static int staticState(int v) {
        counter = counter * 31 + v;
        TABLE[v & 7] += v;
        return counter ^ TABLE[(v >> 3) & 7];
    }

    static int charAt(String s, int i) {
        try {
            return s.charAt(i);
        } catch (StringIndexOutOfBoundsException e) {
            return -2;
        } catch (NullPointerException e) {
            return -3;
        }
    }

    static String printing(int n) {
        System.out.println("n=" + n);
        System.out.print((char) ('a' + (n & 15)));
        System.out.println();
        System.out.println(n % 2 == 0);
        System.out.println((long) n * n);
        System.out.print("caf\u00e9 \ud83d\ude00\n");
        return "printed";
    }

    static int wrapped(int mode) throws Checked {
        try {
            thrower(mode);
            return 0;
        } catch (RuntimeException e) {
            Checked c = new Checked("wrapped " + e.getClass().getName());
            c.initCause(e);
            throw c;
        }
    }

    static String causes(int mode) {
        try {
            wrapped(mode);
            return "none";
        } catch (Checked c) {
            Throwable cause = c.getCause();
            return c.getMessage() + " <- " + (cause == null ? "-" : cause.getClass().getSimpleName());
        }
    }

    // the messages the VM gives its own exceptions, where the model claims to know them
    static String vmMessages(int n) {
        StringBuilder sb = new StringBuilder();
        try { sb.append(10 / (n & 1)); } catch (ArithmeticException e) { sb.append(e.getMessage()); }
        sb.append('|');
        try { sb.append(new long[n & 3][n & 1].length); } catch (NegativeArraySizeException e) { sb.append("x"); }
        try { sb.append(new int[n % 5].length); } catch (NegativeArraySizeException e) { sb.append(e.getMessage()); }
        sb.append('|');
        try { sb.append(TABLE[n % 10]); } catch (ArrayIndexOutOfBoundsException e) { sb.append(e.getMessage()); }
        return sb.toString();
    }

    static int instanceChecks(int mode) {
        Object[] objs = {"s", new int[0], new String[0], new Boom(1), new StringBuilder(), null, new Object[0]};
        Object o = objs[(mode & 0x7fffffff) % objs.length];
        int r = 0;
        if (o instanceof String) r |= 1;
        if (o instanceof Object[]) r |= 2;
        if (o instanceof CharSequence) r |= 4;
        if (o instanceof RuntimeException) r |= 8;
        if (o instanceof java.io.Serializable) r |= 16;
        if (o instanceof Cloneable) r |= 32;
        if (o instanceof String[]) r |= 64;
        return r;
    }
}
