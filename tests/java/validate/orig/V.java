// The original of every validation pair (tests/test_validate.py): equiv/V.java must be proved equivalent to
// it, each method of mutant/V.java must never be.
public class V {
    public static int add(int a, int b) { return a + b; }
    public static int dbl(int x) { return x * 2; }
    public static int mul(int a, int b) { return a * b; }
    public static int neg(int x) { return -x; }
    public static int sum5(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * 5; return s; }
    public static int plus10(int x) { return x + 10; }
    public static int sign(int x) { if (x > 0) return 1; return 2; }
    public static int fill(int[] a) { java.util.Arrays.fill(a, 3); return a.length; }
    public static int check(int x) { if (x < 0) throw new IllegalArgumentException(); return x; }
    public static int half(int x) { return x >> 1; }
    public static void hello(int x) { System.out.println(x); }
    public static int len(String s) { return s.length(); }
    public static int quot(int a, int b) { return a / b; }
    public static long lsum(long a, long b) { return a + b; }
    public static double dmul(double x) { return x * 2.0; }
}
