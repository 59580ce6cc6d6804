// Strength reduction over a step that varies per iteration but whose values are constants (tests/test_varstep.py).
public class VarStep {
    static int inv(int n, int d) { int s = 0; for (int i = 0; i < n; ) { s += i * 50; i += (d == 150 ? 4 : 1); } return s; }
    static int var2(int n) { int s = 0; for (int i = 0; i < n; ) { s += i * 50; if (s > 1000) i += 2; else i += 3; } return s; }
    static int var3(int n) { int s = 0; for (int i = 0; i < n; ) { s += i << 3; i += ((s & 1) == 0) ? 5 : 1; } return s; }
    static long varl(int n) { long s = 0; for (long i = 0; i < n; ) { s += i * 12L; i += (s > 99 ? 3L : 7L); } return s; }
    public static void main(String[] args) {
        for (int n : new int[] {0, 1, 7, 1000, 100000}) {
            System.out.println(n + ": " + inv(n, 150) + " " + inv(n, 3) + " " + var2(n) + " " + var3(n) + " " + varl(n));
        }
    }
}
