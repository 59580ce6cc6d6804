// Equivalent rewrites of orig/V.java (reordered operands, strength reduction, other local slots).
public class V {
    public static int add(int a, int b) { return b + a; }
    public static int dbl(int x) { return x << 1; }
    public static int mul(int a, int b) { int t = b; int u = a; int unused = 7; return u * t; }
    public static int neg(int x) { return 0 - x; }
    public static int sum5(int n) { int s = 0; int j = 0; for (int i = 0; i < n; i++) { s += j; j += 5; } return s; }
    public static int plus10(int x) { return 4 + x + 6; }
    public static int sign(int x) { if (x <= 0) return 2; return 1; }
    public static int fill(int[] a) { java.util.Arrays.fill(a, 3); return a.length; }
    public static int check(int x) { if (x >= 0) return x; throw new IllegalArgumentException(); }
    public static int half(int x) { return x >> 1; }
    public static void hello(int x) { System.out.println(x); }
    public static int len(String s) { return s.length(); }
    public static int quot(int a, int b) { return a / b; }
    public static long lsum(long a, long b) { return b + a; }
    public static double dmul(double x) { return 2.0 * x; }
}
