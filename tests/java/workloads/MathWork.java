import org.apache.commons.math3.analysis.UnivariateFunction;
import org.apache.commons.math3.analysis.integration.SimpsonIntegrator;
import org.apache.commons.math3.analysis.interpolation.SplineInterpolator;
import org.apache.commons.math3.analysis.polynomials.PolynomialFunction;
import org.apache.commons.math3.analysis.polynomials.PolynomialSplineFunction;
import org.apache.commons.math3.analysis.solvers.BisectionSolver;
import org.apache.commons.math3.analysis.solvers.BrentSolver;
import org.apache.commons.math3.analysis.solvers.LaguerreSolver;
import org.apache.commons.math3.complex.Complex;
import org.apache.commons.math3.distribution.NormalDistribution;
import org.apache.commons.math3.exception.MathIllegalArgumentException;
import org.apache.commons.math3.fraction.BigFraction;
import org.apache.commons.math3.fraction.Fraction;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.CholeskyDecomposition;
import org.apache.commons.math3.linear.EigenDecomposition;
import org.apache.commons.math3.linear.LUDecomposition;
import org.apache.commons.math3.linear.QRDecomposition;
import org.apache.commons.math3.linear.RealMatrix;
import org.apache.commons.math3.linear.RealVector;
import org.apache.commons.math3.linear.SingularMatrixException;
import org.apache.commons.math3.linear.SingularValueDecomposition;
import org.apache.commons.math3.primes.Primes;
import org.apache.commons.math3.random.Well19937c;
import org.apache.commons.math3.special.Beta;
import org.apache.commons.math3.special.Erf;
import org.apache.commons.math3.special.Gamma;
import org.apache.commons.math3.stat.descriptive.DescriptiveStatistics;
import org.apache.commons.math3.stat.descriptive.SummaryStatistics;
import org.apache.commons.math3.stat.regression.SimpleRegression;
import org.apache.commons.math3.transform.DftNormalization;
import org.apache.commons.math3.transform.FastFourierTransformer;
import org.apache.commons.math3.transform.TransformType;
import org.apache.commons.math3.util.ArithmeticUtils;
import org.apache.commons.math3.util.CombinatoricsUtils;
import org.apache.commons.math3.util.FastMath;

import java.util.Locale;

/**
 * A deterministic workload over Apache Commons Math 3 (written against 3.6).
 *
 * <p>Runs, over inputs from a seeded linear congruential generator (and a seeded Well19937c): dense
 * linear algebra (products, LU / QR / Cholesky / eigen / singular value decompositions, solving,
 * inverses, determinants), the FastMath functions over many arguments, DescriptiveStatistics and
 * SummaryStatistics, a simple regression, root finding (Brent, bisection, Laguerre), Simpson
 * integration, spline interpolation, the FFT, Fraction and BigFraction arithmetic, Complex
 * numbers, special functions (Gamma, Beta, Erf), the normal distribution and integer utilities.
 * Every result is folded into a checksum of the exact double bits; a sample is printed with fixed
 * formatting.
 *
 * <pre>
 *   java -cp commons-math3.jar:CLASSES MathWork [ROUNDS]
 * </pre>
 */
public final class MathWork {
    private static long seed = 0x123456789ABCDEFL;
    private static long checksum = 0xcbf29ce484222325L;
    private static int lines;

    private MathWork() {}

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
        mix(Double.doubleToLongBits(d == 0.0 ? 0.0 : d));  // the sign of zero is not compared
    }

    private static void mix(double[] values) {
        mix(values.length);
        for (double d : values) {
            mix(d);
        }
    }

    private static void mix(RealMatrix m) {
        mix((long) m.getRowDimension() << 32 | m.getColumnDimension());
        for (double[] row : m.getData()) {
            mix(row);
        }
    }

    private static void mix(String s) {
        mix(s.length());
        for (int i = 0; i < s.length(); i++) {
            mix((long) s.charAt(i));
        }
    }

    private static String f(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return Double.toString(d);
        }
        String s = String.format(Locale.ROOT, "%.9g", d);
        return s.startsWith("-0.00000000") && d > -1e-300 && d < 1e-300 ? s.substring(1) : s;
    }

    private static String f(double[] values, int max) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < Math.min(max, values.length); i++) {
            sb.append(i == 0 ? "" : " ").append(f(values[i]));
        }
        return sb.append(values.length > max ? " ...]" : "]").toString();
    }

    private static void out(String s) {
        System.out.println(s);
        lines++;
        mix(s);
    }

    private static RealMatrix randomMatrix(int rows, int cols) {
        double[][] a = new double[rows][cols];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                a[i][j] = Math.round(next() * 1000.0) / 100.0;
            }
        }
        return new Array2DRowRealMatrix(a, false);
    }

    private static void linear(int k, boolean show) {
        int n = 2 + k % 7;
        RealMatrix a = randomMatrix(n, n);
        RealMatrix spd = a.transpose().multiply(a).add(
                org.apache.commons.math3.linear.MatrixUtils.createRealIdentityMatrix(n).scalarMultiply(n));
        RealVector b = new ArrayRealVector(randomMatrix(1, n).getRow(0));
        mix(a.multiply(a.transpose()));
        mix(a.add(spd).subtract(a.transpose()));
        mix(a.getNorm());
        mix(a.getFrobeniusNorm());
        mix(a.getTrace());
        LUDecomposition lu = new LUDecomposition(a);
        double det = lu.getDeterminant();
        mix(det);
        mix(lu.getL());
        mix(lu.getU());
        String solved;
        try {
            RealVector x = lu.getSolver().solve(b);
            mix(x.toArray());
            RealMatrix inv = lu.getSolver().getInverse();
            mix(inv);
            solved = "x=" + f(x.toArray(), 3) + " |x|=" + f(x.getNorm());
        } catch (SingularMatrixException e) {
            solved = "singular: " + e.getClass().getSimpleName();
        }
        QRDecomposition qr = new QRDecomposition(randomMatrix(n + 2, n));
        mix(qr.getR());
        mix(qr.getQ());
        RealVector ls = qr.getSolver().solve(new ArrayRealVector(randomMatrix(1, n + 2).getRow(0)));
        mix(ls.toArray());
        CholeskyDecomposition chol = new CholeskyDecomposition(spd);
        mix(chol.getL());
        mix(chol.getDeterminant());
        EigenDecomposition eig = new EigenDecomposition(spd);
        double[] eigenvalues = eig.getRealEigenvalues();
        mix(eigenvalues);
        mix(eig.getV().getColumnDimension());
        SingularValueDecomposition svd = new SingularValueDecomposition(randomMatrix(n + 1, n));
        double[] sv = svd.getSingularValues();
        mix(sv);
        mix(svd.getConditionNumber());
        mix(svd.getRank());
        mix(a.preMultiply(b).toArray());
        mix(a.operate(b).dotProduct(b));
        mix(b.outerProduct(b).getTrace());
        mix(b.mapDivide(3.0).ebeMultiply(b).getL1Norm());
        if (show) {
            out(String.format(Locale.ROOT, "lin %d n=%d det=%s norm=%s trace=%s %s", k, n, f(det), f(a.getNorm()),
                    f(a.getTrace()), solved));
            out("  chol det=" + f(chol.getDeterminant()) + " eig=" + f(eigenvalues, 4) + " sv=" + f(sv, 4)
                    + " cond=" + f(svd.getConditionNumber()) + " ls=" + f(ls.toArray(), 2));
        }
    }

    private static void fastMath(int k, boolean show) {
        double x = next() * (k % 3 == 0 ? 1.0 : k % 3 == 1 ? 50.0 : 1e6);
        double y = next() * 10.0;
        double ax = Math.abs(x) + 1e-3;
        double[] r = {FastMath.sin(x), FastMath.cos(x), FastMath.tan(x), FastMath.exp(y), FastMath.log(ax),
            FastMath.log10(ax), FastMath.log1p(ax), FastMath.expm1(y), FastMath.pow(ax, y), FastMath.sqrt(ax),
            FastMath.cbrt(x), FastMath.atan(x), FastMath.atan2(x, y), FastMath.asin(next()), FastMath.acos(next()),
            FastMath.sinh(y), FastMath.cosh(y), FastMath.tanh(x), FastMath.hypot(x, y), FastMath.floor(x),
            FastMath.ceil(x), FastMath.rint(x), FastMath.ulp(x), FastMath.scalb(x, k % 20 - 10),
            FastMath.toRadians(x), FastMath.IEEEremainder(x, y), FastMath.copySign(y, x), FastMath.nextUp(x),
            FastMath.round(x), FastMath.pow(y, k % 9 - 4), FastMath.asinh(x), FastMath.acosh(ax + 1),
            FastMath.atanh(next() * 0.99)};
        mix(r);
        if (show) {
            out("fm " + k + " x=" + f(x) + " y=" + f(y) + " -> " + f(r, 12));
        }
    }

    private static void statistics(int k, boolean show) {
        Well19937c rng = new Well19937c(new int[] {k, 17, 42});
        DescriptiveStatistics ds = new DescriptiveStatistics();
        SummaryStatistics ss = new SummaryStatistics();
        SimpleRegression reg = new SimpleRegression();
        int n = 50 + k % 200;
        for (int i = 0; i < n; i++) {
            double v = rng.nextGaussian() * 3.0 + (k % 5);
            ds.addValue(v);
            ss.addValue(v);
            reg.addData(i, 2.5 * i + v);
        }
        double[] r = {ds.getMean(), ds.getStandardDeviation(), ds.getVariance(), ds.getPercentile(50),
            ds.getPercentile(90), ds.getSkewness(), ds.getKurtosis(), ds.getMin(), ds.getMax(), ds.getGeometricMean(),
            ds.getSumsq(), ss.getMean(), ss.getStandardDeviation(), ss.getSecondMoment(), reg.getSlope(),
            reg.getIntercept(), reg.getRSquare(), reg.getSlopeStdErr(), rng.nextDouble(), rng.nextInt(1000)};
        mix(r);
        mix(ds.getSortedValues());
        if (show) {
            out("stat " + k + " n=" + n + " -> " + f(r, 20));
        }
    }

    private static void analysis(int k, boolean show) {
        final double c = 1.0 + (k % 10) / 3.0;
        UnivariateFunction g = new UnivariateFunction() {
            @Override
            public double value(double x) {
                return FastMath.cos(x) - x / c;
            }
        };
        double brent = new BrentSolver(1e-12).solve(200, g, 0.0, 3.0);
        double bisect = new BisectionSolver(1e-9).solve(200, g, 0.0, 3.0);
        double[] coefficients = {-c, 0.5, next(), 1.0 + nextInt(3)};
        PolynomialFunction poly = new PolynomialFunction(coefficients);
        Complex[] roots = new LaguerreSolver().solveAllComplex(coefficients, 0.0);
        StringBuilder rootText = new StringBuilder();
        for (Complex z : roots) {
            mix(z.getReal());
            mix(z.getImaginary());
            rootText.append(f(z.getReal())).append(z.getImaginary() < 0 ? "" : "+").append(f(z.getImaginary()))
                    .append("i ");
        }
        double integral = new SimpsonIntegrator().integrate(10000, g, 0.0, c);
        double[] xs = new double[8];
        double[] ys = new double[8];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = i + (i > 0 ? next() * 0.4 : 0.0);
            ys[i] = FastMath.sin(xs[i]) * c;
        }
        PolynomialSplineFunction spline = new SplineInterpolator().interpolate(xs, ys);
        double[] r = {brent, bisect, poly.value(c), poly.derivative().value(1.5), integral, spline.value(3.3),
            spline.derivative().value(2.2)};
        mix(r);
        mix(poly.toString());
        if (show) {
            out("ana " + k + " brent=" + f(brent) + " bisect=" + f(bisect) + " simpson=" + f(integral) + " spline="
                    + f(spline.value(3.3)));
            out("  poly=" + poly + " roots=" + rootText.toString().trim());
        }
    }

    private static void fft(int k, boolean show) {
        int n = 1 << (3 + k % 6);
        double[] signal = new double[n];
        for (int i = 0; i < n; i++) {
            signal[i] = FastMath.sin(2 * FastMath.PI * 3 * i / n) + 0.5 * FastMath.cos(2 * FastMath.PI * 5 * i / n)
                    + 0.1 * next();
        }
        FastFourierTransformer fft = new FastFourierTransformer(
                k % 2 == 0 ? DftNormalization.STANDARD : DftNormalization.UNITARY);
        Complex[] spectrum = fft.transform(signal, TransformType.FORWARD);
        Complex[] back = fft.transform(spectrum, TransformType.INVERSE);
        double err = 0;
        for (int i = 0; i < n; i++) {
            mix(spectrum[i].getReal());
            mix(spectrum[i].getImaginary());
            err = Math.max(err, Math.abs(back[i].getReal() - signal[i]));
        }
        mix(err < 1e-9 ? 1 : 0);
        if (show) {
            out("fft " + k + " n=" + n + " |X3|=" + f(spectrum[3].abs()) + " |X5|=" + f(spectrum[5].abs())
                    + " arg3=" + f(spectrum[3].getArgument()) + " roundTrip=" + (err < 1e-9));
        }
    }

    private static void exact(int k, boolean show) {
        Fraction a = new Fraction(nextInt(200) - 100, 1 + nextInt(60));
        Fraction b = new Fraction(1 + nextInt(99), 1 + nextInt(99));
        Fraction sum = a.add(b);
        Fraction prod = a.multiply(b);
        Fraction quot = a.divide(b);
        Fraction approx = new Fraction(FastMath.PI * (k % 7 + 1), 1e-6, 100);
        BigFraction big = new BigFraction(a.getNumerator(), a.getDenominator()).pow(5).subtract(
                new BigFraction(b.getNumerator(), b.getDenominator()).pow(3));
        Complex z = new Complex(next(), next());
        Complex w = z.multiply(z.conjugate()).add(z.sqrt()).divide(z.exp().add(Complex.ONE)).pow(1.5);
        String text = a + " " + b + " sum=" + sum + " prod=" + prod + " quot=" + quot + " approx=" + approx
                + " big=" + big + " cmp=" + a.compareTo(b) + " pct=" + f(a.percentageValue());
        mix(text);
        mix(w.getReal());
        mix(w.getImaginary());
        long gcd = ArithmeticUtils.gcd(nextInt(100000) + 1, nextInt(100000) + 1);
        long lcm = ArithmeticUtils.lcm(nextInt(1000) + 1, nextInt(1000) + 1);
        long binom = CombinatoricsUtils.binomialCoefficient(20 + k % 30, k % 15);
        int prime = Primes.nextPrime(nextInt(1_000_000));
        String overflow;
        try {
            ArithmeticUtils.mulAndCheck(Integer.MAX_VALUE / (1 + k % 3), 4);
            overflow = "none";
        } catch (ArithmeticException e) {
            overflow = e.getClass().getSimpleName();
        }
        String zero;
        try {
            a.divide(Fraction.ZERO);
            zero = "none";
        } catch (ArithmeticException e) {
            zero = e.getClass().getSimpleName();
        }
        mix(gcd);
        mix(lcm);
        mix(binom);
        mix(prime);
        mix(overflow + zero);
        if (show) {
            out("exact " + k + " " + text);
            out("  w=" + f(w.getReal()) + "," + f(w.getImaginary()) + " gcd=" + gcd + " lcm=" + lcm + " binom="
                    + binom + " prime=" + prime + " overflow=" + overflow + " divZero=" + zero);
        }
    }

    private static void special(int k, boolean show) {
        double x = 0.05 + Math.abs(next()) * 12.0;
        double p = Math.abs(next()) * 0.98 + 0.01;
        NormalDistribution normal = new NormalDistribution(null, k % 5 - 2.0, 1.0 + (k % 3), 1e-9);
        double[] r = {Gamma.gamma(x), Gamma.logGamma(x), Gamma.digamma(x), Gamma.trigamma(x),
            Gamma.regularizedGammaP(x, x * p), Gamma.regularizedGammaQ(x, 1.5), Beta.logBeta(x, p * 5),
            Beta.regularizedBeta(p, x, 2.5), Erf.erf(x / 6), Erf.erfc(x / 6), Erf.erfInv(p * 2 - 1),
            normal.cumulativeProbability(x - 6), normal.density(x - 6), normal.inverseCumulativeProbability(p)};
        mix(r);
        if (show) {
            out("special " + k + " x=" + f(x) + " p=" + f(p) + " -> " + f(r, 14));
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 250;
        for (int k = 0; k < rounds; k++) {
            boolean show = k % 23 == 0;
            linear(k, show);
            for (int i = 0; i < 10; i++) {
                fastMath(k * 10 + i, show && i == 0);
            }
            if (k % 3 == 0) {
                statistics(k, show);
            }
            analysis(k, show);
            fft(k, show);
            exact(k, show);
            special(k, show);
        }
        // A few edge cases with exceptions.
        try {
            new LUDecomposition(new Array2DRowRealMatrix(new double[][] {{1, 2}, {2, 4}})).getSolver().getInverse();
            out("singular inverse: none");
        } catch (SingularMatrixException e) {
            out("singular inverse: " + e.getClass().getName() + ": " + e.getMessage());
        }
        try {
            new BrentSolver().solve(100, x -> x * x + 1, -1, 1);
            out("no bracket: none");
        } catch (MathIllegalArgumentException e) {
            out("no bracket: " + e.getClass().getName() + ": " + e.getMessage());
        }
        out("lines=" + (lines + 1) + " checksum=" + Long.toHexString(checksum));
    }
}
