// equiv/VarStep.java with one arm wrong per method: never equivalent to orig/VarStep.java.
public class VarStep {
    // a wrong constant in an arm
    static int inv(int n, int d) { int s = 0; int t = 0; for (int i = 0; i < n; ) { s += t; if (d == 150) { i += 4; t += 200; } else { i += 1; t += 51; } } return s; }
    // the step's arms swapped
    static int var2(int n) { int s = 0; int t = 0; for (int i = 0; i < n; ) { s += t; if (s > 1000) { i += 2; t += 150; } else { i += 3; t += 100; } } return s; }
    static long varl(int n) { long s = 0; long t = 0; for (long i = 0; i < n; ) { s += t; if (s > 99) { i += 3; t += 36; } else { i += 7; t += 85; } } return s; }
}
