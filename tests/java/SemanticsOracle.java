import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;

/**
 * The JVM's answer for peggy_jvm/semantics.py (tests/test_semantics.py).
 *
 * <p>Reads test vectors from stdin, one per line: {@code OP ARG1 [ARG2]}, where OP is a typed operator name of
 * {@code semantics.OPERATIONS} ({@code add.i}, {@code shl.l}, {@code l2f}, {@code cmpl.d}, ...) or an int branch
 * condition {@code cond.eq|ne|lt|ge|gt|le}. int and long arguments are decimal; float and double arguments are
 * their raw bits in hex ({@code 0x7fc00000}), so NaN and -0.0 arrive exactly. Writes one line per vector: an int
 * or long result in decimal, a float or double result as raw bits in hex ({@code floatToRawIntBits}), or
 * {@code THROW <exception class>: <message>}.
 *
 * <p>Every operation is the Java operator itself on non-constant operands, so javac emits the instruction under
 * test ({@code a + b} on two ints is {@code iadd}, {@code (int) f} is {@code f2i}, {@code (long) i << n} with an
 * int count is {@code lshl}, ...). The comparisons {@code lcmp, fcmpl, fcmpg, dcmpl, dcmpg} have no Java operator
 * that yields their int result, so they are computed from their JVMS definition with Java's comparison operators
 * (JLS 15.20.1: every comparison involving NaN is false, -0.0 == 0.0):
 * 1 if a &gt; b, 0 if a == b, -1 if a &lt; b, otherwise (a NaN) -1 for *cmpl and 1 for *cmpg.
 */
public final class SemanticsOracle {
    private SemanticsOracle() {}

    static int I(String s) { return Integer.parseInt(s); }
    static long L(String s) { return Long.parseLong(s); }
    static float F(String s) { return Float.intBitsToFloat(Integer.parseUnsignedInt(hex(s), 16)); }
    static double D(String s) { return Double.longBitsToDouble(Long.parseUnsignedLong(hex(s), 16)); }

    static String hex(String s) {
        if (!s.startsWith("0x")) throw new IllegalArgumentException("expected raw bits 0x...: " + s);
        return s.substring(2);
    }

    static String i(int v) { return Integer.toString(v); }
    static String l(long v) { return Long.toString(v); }
    static String f(float v) { return "0x" + Integer.toHexString(Float.floatToRawIntBits(v)); }
    static String d(double v) { return "0x" + Long.toHexString(Double.doubleToRawLongBits(v)); }
    static String b(boolean v) { return v ? "1" : "0"; }

    static int cmpl(float a, float b) { return a > b ? 1 : a == b ? 0 : a < b ? -1 : -1; }
    static int cmpg(float a, float b) { return a > b ? 1 : a == b ? 0 : a < b ? -1 : 1; }
    static int cmpl(double a, double b) { return a > b ? 1 : a == b ? 0 : a < b ? -1 : -1; }
    static int cmpg(double a, double b) { return a > b ? 1 : a == b ? 0 : a < b ? -1 : 1; }
    static int cmp(long a, long b) { return a > b ? 1 : a == b ? 0 : -1; }

    static String eval(String op, String[] t) {
        switch (op) {
            case "add.i": return i(I(t[1]) + I(t[2]));
            case "sub.i": return i(I(t[1]) - I(t[2]));
            case "mul.i": return i(I(t[1]) * I(t[2]));
            case "div.i": return i(I(t[1]) / I(t[2]));
            case "rem.i": return i(I(t[1]) % I(t[2]));
            case "neg.i": return i(-I(t[1]));
            case "shl.i": return i(I(t[1]) << I(t[2]));
            case "shr.i": return i(I(t[1]) >> I(t[2]));
            case "ushr.i": return i(I(t[1]) >>> I(t[2]));
            case "and.i": return i(I(t[1]) & I(t[2]));
            case "or.i": return i(I(t[1]) | I(t[2]));
            case "xor.i": return i(I(t[1]) ^ I(t[2]));

            case "add.l": return l(L(t[1]) + L(t[2]));
            case "sub.l": return l(L(t[1]) - L(t[2]));
            case "mul.l": return l(L(t[1]) * L(t[2]));
            case "div.l": return l(L(t[1]) / L(t[2]));
            case "rem.l": return l(L(t[1]) % L(t[2]));
            case "neg.l": return l(-L(t[1]));
            case "shl.l": return l(L(t[1]) << I(t[2]));
            case "shr.l": return l(L(t[1]) >> I(t[2]));
            case "ushr.l": return l(L(t[1]) >>> I(t[2]));
            case "and.l": return l(L(t[1]) & L(t[2]));
            case "or.l": return l(L(t[1]) | L(t[2]));
            case "xor.l": return l(L(t[1]) ^ L(t[2]));

            case "add.f": return f(F(t[1]) + F(t[2]));
            case "sub.f": return f(F(t[1]) - F(t[2]));
            case "mul.f": return f(F(t[1]) * F(t[2]));
            case "div.f": return f(F(t[1]) / F(t[2]));
            case "rem.f": return f(F(t[1]) % F(t[2]));
            case "neg.f": return f(-F(t[1]));

            case "add.d": return d(D(t[1]) + D(t[2]));
            case "sub.d": return d(D(t[1]) - D(t[2]));
            case "mul.d": return d(D(t[1]) * D(t[2]));
            case "div.d": return d(D(t[1]) / D(t[2]));
            case "rem.d": return d(D(t[1]) % D(t[2]));
            case "neg.d": return d(-D(t[1]));

            case "i2l": return l((long) I(t[1]));
            case "i2f": return f((float) I(t[1]));
            case "i2d": return d((double) I(t[1]));
            case "l2i": return i((int) L(t[1]));
            case "l2f": return f((float) L(t[1]));
            case "l2d": return d((double) L(t[1]));
            case "f2i": return i((int) F(t[1]));
            case "f2l": return l((long) F(t[1]));
            case "f2d": return d((double) F(t[1]));
            case "d2i": return i((int) D(t[1]));
            case "d2l": return l((long) D(t[1]));
            case "d2f": return f((float) D(t[1]));
            case "i2b": return i((byte) I(t[1]));
            case "i2c": return i((char) I(t[1]));
            case "i2s": return i((short) I(t[1]));

            case "cmp.l": return i(cmp(L(t[1]), L(t[2])));
            case "cmpl.f": return i(cmpl(F(t[1]), F(t[2])));
            case "cmpg.f": return i(cmpg(F(t[1]), F(t[2])));
            case "cmpl.d": return i(cmpl(D(t[1]), D(t[2])));
            case "cmpg.d": return i(cmpg(D(t[1]), D(t[2])));

            case "cond.eq": return b(I(t[1]) == I(t[2]));
            case "cond.ne": return b(I(t[1]) != I(t[2]));
            case "cond.lt": return b(I(t[1]) < I(t[2]));
            case "cond.ge": return b(I(t[1]) >= I(t[2]));
            case "cond.gt": return b(I(t[1]) > I(t[2]));
            case "cond.le": return b(I(t[1]) <= I(t[2]));
            default: throw new IllegalArgumentException("unknown operation " + op);
        }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"), 1 << 16);
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, "UTF-8"), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] t = line.split(" ");
            String result;
            try {
                result = eval(t[0], t);
            } catch (ArithmeticException e) {
                result = "THROW " + e.getClass().getName() + ": " + e.getMessage();
            }
            out.write(result);
            out.write('\n');
        }
        out.flush();
    }
}
