// orig/VarStep.java strength-reduced by hand: t = i * k stepped by the step times k in each arm.
public class VarStep {
    static int inv(int n, int d) { int s = 0; int t = 0; for (int i = 0; i < n; ) { s += t; if (d == 150) { i += 4; t += 200; } else { i += 1; t += 50; } } return s; }
    static int var2(int n) { int s = 0; int t = 0; for (int i = 0; i < n; ) { s += t; if (s > 1000) { i += 2; t += 100; } else { i += 3; t += 150; } } return s; }
    static int var3(int n) { int s = 0; int t = 0; for (int i = 0; i < n; ) { s += t; if ((s & 1) == 0) { i += 5; t += 40; } else { i += 1; t += 8; } } return s; }
    static long varl(int n) { long s = 0; long t = 0; for (long i = 0; i < n; ) { s += t; if (s > 99) { i += 3; t += 36; } else { i += 7; t += 84; } } return s; }
}
