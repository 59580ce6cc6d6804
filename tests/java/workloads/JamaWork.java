import Jama.CholeskyDecomposition;
import Jama.EigenvalueDecomposition;
import Jama.LUDecomposition;
import Jama.Matrix;
import Jama.QRDecomposition;
import Jama.SingularValueDecomposition;

import java.util.Locale;

/**
 * A deterministic workload over Jama (the NIST/MathWorks matrix package).
 *
 * <p>Builds matrices of several shapes from a seeded linear congruential generator and runs the
 * library's whole surface over them: products, transposes, sums, element-wise operations, solving,
 * the LU, QR, Cholesky, singular value and eigenvalue decompositions, inverse, determinant, rank,
 * condition number, norms and trace. Every few rounds it prints a line of rounded values; every
 * result (including the ones not printed) is folded into a 64-bit checksum of the exact double
 * bits, printed at the end. The output depends only on the library's code, so an original jar and
 * a re-encoded one must print exactly the same text.
 *
 * <pre>
 *   java -cp jama.jar:CLASSES JamaWork [ROUNDS]
 * </pre>
 */
public final class JamaWork {
    private static long seed = 0x2545F4914F6CDD1DL;
    private static long checksum = 0xcbf29ce484222325L;
    private static int lines;

    private JamaWork() {}

    /** Knuth's MMIX LCG; returns a double in [-1, 1) built from the high bits. */
    private static double next() {
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        return ((seed >>> 11) * 0x1.0p-53) * 2.0 - 1.0;
    }

    private static int nextInt(int bound) {
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        return (int) ((seed >>> 33) % bound);
    }

    private static void mix(long v) {
        for (int i = 0; i < 8; i++) {
            checksum ^= (v >>> (8 * i)) & 0xff;
            checksum *= 0x100000001b3L;
        }
    }

    private static void mix(double d) {
        // -0.0 and 0.0 are folded together: the sign of a zero is not part of what we compare.
        mix(Double.doubleToLongBits(d == 0.0 ? 0.0 : d));
    }

    private static void mix(Matrix m) {
        mix((long) m.getRowDimension() << 32 | m.getColumnDimension());
        for (double[] row : m.getArray()) {
            for (double d : row) {
                mix(d);
            }
        }
    }

    private static String r(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return Double.toString(d);
        }
        String s = String.format(Locale.ROOT, "%.6g", d);
        return s.equals("-0.00000") ? "0.00000" : s;
    }

    private static void out(String s) {
        System.out.println(s);
        lines++;
        for (int i = 0; i < s.length(); i++) {
            mix((long) s.charAt(i));
        }
    }

    private static Matrix random(int rows, int cols) {
        double[][] a = new double[rows][cols];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                a[i][j] = Math.round(next() * 1000.0) / 100.0;
            }
        }
        return new Matrix(a);
    }

    /** A symmetric positive definite matrix: A^T A + n I. */
    private static Matrix spd(int n) {
        Matrix a = random(n, n);
        return a.transpose().times(a).plus(Matrix.identity(n, n).times(n));
    }

    private static String firstRow(Matrix m, int max) {
        StringBuilder sb = new StringBuilder("[");
        int n = Math.min(max, m.getColumnDimension());
        for (int j = 0; j < n; j++) {
            if (j > 0) {
                sb.append(' ');
            }
            sb.append(r(m.get(0, j)));
        }
        return sb.append(']').toString();
    }

    private static String join(double[] values, int max) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < Math.min(max, values.length); i++) {
            if (i > 0) {
                sb.append(' ');
            }
            sb.append(r(values[i]));
        }
        return sb.append(']').toString();
    }

    private static void round(int k) {
        int n = 3 + k % 8;
        boolean show = k % 10 == 0;
        Matrix a = random(n, n);
        Matrix b = random(n, 2);
        Matrix at = a.transpose();

        Matrix prod = a.times(at);
        Matrix sum = a.plus(at).minus(Matrix.identity(n, n));
        Matrix elem = a.arrayTimes(at);
        Matrix scaled = a.times(0.5).uminus();
        mix(prod);
        mix(sum);
        mix(elem);
        mix(scaled);
        mix(a.norm1());
        mix(a.normInf());
        mix(a.normF());
        mix(a.trace());

        LUDecomposition lu = a.lu();
        mix(lu.getL());
        mix(lu.getU());
        for (int p : lu.getPivot()) {
            mix(p);
        }
        double det = a.det();
        mix(det);
        String solved;
        try {
            Matrix x = a.solve(b);
            Matrix residual = a.times(x).minus(b);
            mix(x);
            solved = "x0=" + firstRow(x, 2) + " res=" + r(residual.normInf() < 1e-8 ? 0.0 : residual.normInf());
            Matrix inv = a.inverse();
            mix(inv);
            mix(inv.times(a).minus(Matrix.identity(n, n)).normF() < 1e-8 ? 1 : 0);
        } catch (RuntimeException e) {
            solved = "solve failed: " + e.getClass().getName() + ": " + e.getMessage();
        }

        QRDecomposition qr = new QRDecomposition(random(n + 2, n));
        mix(qr.getR());
        mix(qr.getQ());
        mix(qr.getH());
        mix(qr.isFullRank() ? 1 : 0);

        Matrix s = spd(n);
        CholeskyDecomposition chol = s.chol();
        mix(chol.getL());
        mix(chol.isSPD() ? 1 : 0);
        Matrix cs = chol.solve(b);
        mix(cs);

        SingularValueDecomposition svd = random(n + 1, n).svd();
        mix(svd.getU());
        mix(svd.getV());
        mix(svd.getS());
        double[] sv = svd.getSingularValues();
        mix(svd.rank());
        mix(svd.cond());
        mix(svd.norm2());

        EigenvalueDecomposition symEig = s.eig();
        mix(symEig.getV());
        mix(symEig.getD());
        EigenvalueDecomposition eig = a.eig();
        double[] re = eig.getRealEigenvalues();
        double[] im = eig.getImagEigenvalues();
        for (int i = 0; i < re.length; i++) {
            mix(re[i]);
            mix(im[i]);
        }
        mix(eig.getD());

        if (show) {
            out(String.format(Locale.ROOT, "round %d n=%d det=%s norm1=%s normInf=%s normF=%s trace=%s", k, n,
                    r(det), r(a.norm1()), r(a.normInf()), r(a.normF()), r(a.trace())));
            out("  prod row0=" + firstRow(prod, 4) + " " + solved);
            out("  lu nonsingular=" + lu.isNonsingular() + " U row0=" + firstRow(lu.getU(), 3));
            out("  qr fullRank=" + qr.isFullRank() + " R row0=" + firstRow(qr.getR(), 3));
            out("  chol spd=" + chol.isSPD() + " L00=" + r(chol.getL().get(0, 0)) + " sol=" + firstRow(cs, 2));
            out("  svd sv=" + join(sv, 4) + " rank=" + svd.rank() + " cond=" + r(svd.cond()));
            double[] symValues = symEig.getRealEigenvalues();
            out("  eig sym=" + join(symValues, 4) + " re=" + join(re, 3) + " im=" + join(im, 3));
            out("  rank=" + a.rank() + " cond=" + r(a.cond()) + " norm2=" + r(a.norm2()));
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        for (int k = 0; k < rounds; k++) {
            round(k);
        }

        // Edge cases: a singular matrix, a non-square solve (least squares), a non-SPD Cholesky,
        // dimension errors.
        Matrix singular = new Matrix(new double[][] {{1, 2, 3}, {2, 4, 6}, {1, 0, 1}});
        out("singular det=" + r(singular.det()) + " rank=" + singular.rank()
                + " nonsingular=" + singular.lu().isNonsingular());
        try {
            singular.inverse();
            out("singular inverse: no exception");
        } catch (RuntimeException e) {
            out("singular inverse: " + e.getClass().getName() + ": " + e.getMessage());
        }
        Matrix tall = random(7, 3);
        Matrix rhs = random(7, 1);
        Matrix ls = tall.solve(rhs);
        mix(ls);
        out("least squares x=" + r(ls.get(0, 0)) + "," + r(ls.get(1, 0)) + "," + r(ls.get(2, 0)));
        Matrix notSpd = new Matrix(new double[][] {{1, 2}, {2, 1}});
        out("chol of indefinite spd=" + notSpd.chol().isSPD());
        try {
            random(2, 3).times(random(2, 3));
            out("bad product: no exception");
        } catch (IllegalArgumentException e) {
            out("bad product: " + e.getClass().getName() + ": " + e.getMessage());
        }
        try {
            random(2, 3).plus(random(3, 2));
            out("bad sum: no exception");
        } catch (IllegalArgumentException e) {
            out("bad sum: " + e.getClass().getName() + ": " + e.getMessage());
        }
        Matrix packed = new Matrix(new double[] {1, 2, 3, 4, 5, 6}, 2);
        out("packed=" + firstRow(packed, 3) + " cols=" + packed.getColumnDimension()
                + " sub=" + firstRow(packed.getMatrix(new int[] {1}, 0, 1), 2));
        Matrix big = random(40, 40);
        int pick = nextInt(40);
        mix(big.times(big.transpose()).get(pick, pick));
        mix(big.inverse());
        out("big det=" + r(big.det()) + " norm2=" + r(big.norm2()));
        out("lines=" + (lines + 1) + " checksum=" + Long.toHexString(checksum));
    }
}
