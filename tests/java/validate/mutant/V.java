// One mutant per method of orig/V.java: an operator swapped, a constant +-1, a branch flipped, a call dropped,
// an exception type changed. None may ever be called equivalent.
public class V {
    public static int add(int a, int b) { return a - b; }
    public static int dbl(int x) { return x << 2; }
    public static int mul(int a, int b) { return a * b + 1; }
    public static int neg(int x) { return ~x; }
    public static int sum5(int n) { int s = 0; for (int i = 0; i <= n; i++) s += i * 5; return s; }
    public static int plus10(int x) { return x + 11; }
    public static int sign(int x) { if (x >= 0) return 1; return 2; }
    public static int fill(int[] a) { return a.length; }
    public static int check(int x) { if (x < 0) throw new IllegalStateException(); return x; }
    public static int half(int x) { return x >>> 1; }
    public static void hello(int x) { System.out.println(x + 1); }
    public static int len(String s) { return s.length() - 1; }
    public static int quot(int a, int b) { return a % b; }
    public static long lsum(long a, long b) { return a + b + 1L; }
    public static double dmul(double x) { return x + 2.0; }
}
