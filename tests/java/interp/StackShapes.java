// Purpose-written lifter probes for tests/test_interp.py: expressions whose bytecode keeps values on the operand
// stack across stores, branches and calls, and uses every dup/swap form javac emits (dup_x1, dup_x2, dup2,
// dup2_x1, dup2_x2 come from compound assignments and chained assignments to fields and array elements of
// category-1 and category-2 types). The IR interpreter and the JVM must agree on all of them.
public class StackShapes {
    int fi;
    long fl;
    double fd;
    static long sl;
    static int si;

    static int incrementsInExpressions(int i) {
        int a = i++ + ++i;
        int b = i-- - --i;
        int c = (i += 3) * (i -= 1);
        return a * 1000003 + b * 1009 + c + i;
    }

    static long longArrayCompound(long v, int i) {
        long[] a = {1, 2, 3, 4};
        int k = i & 3;
        a[k] += v;               // dup2 + laload + ladd + lastore
        long r = a[k]++;          // dup2_x2 form for the old value
        long s = ++a[(k + 1) & 3];
        a[k] <<= 3;
        return r ^ s ^ a[k] ^ a[(k + 2) & 3];
    }

    static double doubleArrayChain(double v, int i) {
        double[] a = new double[3];
        double b;
        a[i & 1] = b = v * 2;     // dup2_x2
        a[2] = a[i & 1]++ + b;
        return a[0] - a[1] + a[2] * b;
    }

    static long fieldCompound(long v, int x) {
        StackShapes o = new StackShapes();
        o.fl = v;
        long old = o.fl++;        // dup2_x1
        o.fi += x;                // dup + getfield + iadd + putfield
        int j = o.fi++;           // dup_x1
        o.fd = o.fl = o.fl * 3;   // dup2_x1 twice
        sl = sl + v;
        long s = sl++;
        si = x;
        int t = ++si;
        return old + j + (long) o.fd + o.fl + s + t + sl;
    }

    static int chainedAssignment(int v) {
        int[] a = new int[4];
        int x, y;
        a[v & 3] = x = y = v * 7;   // dup_x2
        StackShapes o = new StackShapes();
        o.fi = a[(v + 1) & 3] = x + 1;  // dup_x2 then dup_x1
        return a[0] + a[1] + a[2] + a[3] + o.fi + y;
    }

    static int stackAcrossBranches(int a, boolean c, boolean d) {
        return (c ? a : -a) + (d ? (c ? 1 : 2) : a * 3) * (a > 0 ? a : 7);
    }

    static long longStackAcrossBranches(long a, int b) {
        return a * (b > 0 ? 2L : b < 0 ? -3L : a) + (b == 0 ? a >>> 3 : (long) b);
    }

    static int argsAcrossBranches(int a, int b) {
        return three(a > b ? a : b, a < b ? ++a : --b, a == b ? a : b);
    }

    static int three(int x, int y, int z) { return x * 31 * 31 + y * 31 + z; }

    static String stringBuilderChain(int n, String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < (n & 7); i++) sb.append(i).append(i % 2 == 0 ? s : "-").append(i > 3);
        return sb.length() + ":" + sb;
    }

    static int swapAndLoop(int n) {
        int a = 1, b = 2;
        for (int i = 0; i < (n & 31); i++) {
            int t = a;
            a = b;
            b = t + b * (i & 1);
        }
        return a * 100 + b;
    }

    static int localReuse(int n) {
        int r = 0;
        {
            long x = n * 3L;
            r += (int) (x >> 1);
        }
        {
            double y = n / 2.0;
            r += (int) y;
        }
        {
            int z = n ^ 0x55;
            r += z;
        }
        return r;
    }

    static int conditionalsOnLongsAndDoubles(long a, double d, float f) {
        int r = 0;
        if (a > 0L) r |= 1;
        if (a == Long.MIN_VALUE) r |= 2;
        if (d >= 0.0) r |= 4;
        if (d != d) r |= 8;
        if (f < 1.0f) r |= 16;
        if ((float) d == f) r |= 32;
        if ((long) d == a) r |= 64;
        return r;
    }

    static int ternaryInIndex(int[] a, int i) {
        if (a == null || a.length == 0) return -1;
        return a[i < 0 ? 0 : i >= a.length ? a.length - 1 : i] + a[a.length - 1 - (i & 0) ];
    }

    static int arraySum(int[] a) {
        int s = 0;
        for (int v : a) s += v;
        return s;
    }

    static String charsAndStrings(String[] ss) {
        if (ss == null) return "none";
        StringBuilder sb = new StringBuilder();
        for (String s : ss) {
            if (s == null) { sb.append('~'); continue; }
            char[] cs = s.toCharArray();
            for (int i = 0; i < cs.length; i++) cs[i] = (char) (cs[i] + 1);
            sb.append(cs).append(s.length() > 2 ? s.substring(1, 3) : s).append(';');
        }
        return sb.toString();
    }

    static long mixedWidths(byte b, short s, char c, boolean z, float f) {
        long r = b;
        r = r * 31 + s;
        r = r * 31 + c;
        r = r * 31 + (z ? 1 : 0);
        r = r * 31 + (long) f;
        r = r * 31 + (byte) (b + s) + (short) (s * c) + (char) (c - b);
        return r;
    }
}
