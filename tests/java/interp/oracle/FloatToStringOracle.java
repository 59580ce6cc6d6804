import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The JVM's Double.toString and Float.toString on many values, for tests/test_interp.py to hold the IR
 * interpreter's model of them (JDK 17's FloatingDecimal) to.
 *
 * Usage: java FloatToStringOracle RANDOM SEED. Prints one line per value: {@code d HEXBITS TEXT} for a double,
 * {@code f HEXBITS TEXT} for a float (bits as Long/Integer.toHexString of the raw bits). Besides RANDOM random bit
 * patterns and RANDOM random short decimals of each type, it prints fixed families: zeros, infinities, NaN, the
 * extreme values, every power of two and of ten with neighbours, the format's switch points (1.0E-3, 1.0E7),
 * integers around 2^53 and 2^63, every subnormal float below 2^-140, and values one of whose midpoints to a
 * neighbour is a short decimal (where the digit loop's stopping tests compare equal values).
 */
public final class FloatToStringOracle {
    private final BufferedWriter out;

    private FloatToStringOracle(BufferedWriter out) {
        this.out = out;
    }

    public static void main(String[] args) throws IOException {
        int random = Integer.parseInt(args[0]);
        long seed = Long.parseLong(args[1]);
        BufferedWriter w = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        FloatToStringOracle o = new FloatToStringOracle(w);
        o.fixedDoubles();
        o.fixedFloats();
        o.midpointTies();
        SplittableRandom rng = new SplittableRandom(seed);
        for (int k = 0; k < random; k++) {
            o.d(Double.longBitsToDouble(rng.nextLong()));
            o.f(Float.intBitsToFloat(rng.nextInt()));
            o.d(Double.parseDouble(shortDecimal(rng, 17, 330)));
            o.f(Float.parseFloat(shortDecimal(rng, 9, 46)));
        }
        w.flush();
    }

    /** A decimal of 1..maxDigits random digits and an exponent in -maxExp..maxExp (as text). */
    private static String shortDecimal(SplittableRandom rng, int maxDigits, int maxExp) {
        int n = 1 + rng.nextInt(maxDigits);
        StringBuilder sb = new StringBuilder();
        sb.append((char) ('1' + rng.nextInt(9)));
        for (int i = 1; i < n; i++) {
            sb.append((char) ('0' + rng.nextInt(10)));
        }
        return sb.append('E').append(rng.nextInt(2 * maxExp + 1) - maxExp).toString();
    }

    private void fixedDoubles() throws IOException {
        double[] specials = {0.0, -0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN,
            Double.MIN_VALUE, Double.MAX_VALUE, Double.MIN_NORMAL, 1.0E-3, 1.0E7, 2.0E-3, 9.999999999999999E22,
            1.0E23, 2.0E23, 1.0E22, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, Math.PI, Math.E, 100.0, 1.0E-5, 123456789.0};
        for (double x : specials) {
            neighbours(x, 4);
        }
        for (int e = -1074; e <= 1023; e++) {
            neighbours(Math.scalb(1.0, e), 2);
            neighbours(Math.scalb(1.5, e), 1);
        }
        for (int e = -325; e <= 309; e++) {
            neighbours(Double.parseDouble("1E" + e), 3);
            neighbours(Double.parseDouble("5E" + e), 1);
            neighbours(Double.parseDouble("9.999999999999999E" + e), 1);
        }
        for (long i = 0; i <= 2000; i++) {
            d(i);
            d(i / 1000.0);
            d((1L << 53) - 1000 + i);
            d(Math.scalb((double) ((1L << 53) - 1000 + i), 10));
            d((double) (Long.MAX_VALUE - i * 1024));
        }
    }

    private void fixedFloats() throws IOException {
        float[] specials = {0.0f, -0.0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN,
            Float.MIN_VALUE, Float.MAX_VALUE, Float.MIN_NORMAL, 1.0E-3f, 1.0E7f, 2.0E-3f, 0.1f, 0.2f, 0.3f,
            1.0f / 3, (float) Math.PI, 100.0f, 1.0E-5f, 16777216f, 1.0E10f, 3.0E7f};
        for (float x : specials) {
            fNeighbours(x, 4);
        }
        for (int e = -149; e <= 127; e++) {
            fNeighbours(Math.scalb(1.0f, e), 2);
            fNeighbours(Math.scalb(1.5f, e), 1);
        }
        for (int e = -46; e <= 39; e++) {
            fNeighbours(Float.parseFloat("1E" + e), 3);
            fNeighbours(Float.parseFloat("5E" + e), 1);
        }
        for (int i = 0; i <= 2000; i++) {
            f(i);
            f(i / 1000.0f);
            f((float) ((1 << 24) - 1000 + i));
        }
        for (int bits = 1; bits < (1 << 9) * 64; bits++) {  // the smallest subnormals, with few significant bits
            f(Float.intBitsToFloat(bits));
        }
    }

    /**
     * Values v = m * 2^e whose upper or lower midpoint (2m +- 1) * 2^(e-1) is exactly q * 5^j * 2^(e-1), a decimal
     * of few digits when e - 1 >= j: there the remainder and half an ulp reach a digit boundary exactly.
     */
    private void midpointTies() throws IOException {
        for (int j = 0; j <= 23; j++) {
            long p5 = pow5(j);
            long lo = ((1L << 53) + p5 - 1) / p5;
            long hi = ((1L << 54) - 1) / p5;
            for (long q : new long[] {lo, lo + 1, lo + 2, lo + 3, hi, hi - 1, hi - 2, (lo + hi) / 2, (lo + hi) / 2 + 1}) {
                if (q % 2 == 0 || q < lo || q > hi) {
                    continue;
                }
                long mid = q * p5;
                for (long m : new long[] {(mid - 1) / 2, (mid + 1) / 2}) {
                    for (int e = j + 1; e <= j + 64 && m >= (1L << 52) && m < (1L << 53); e++) {
                        d(Math.scalb((double) m, e));
                    }
                }
            }
        }
        for (int j = 0; j <= 10; j++) {
            long p5 = pow5(j);
            long lo = ((1L << 24) + p5 - 1) / p5;
            long hi = ((1L << 25) - 1) / p5;
            for (long q : new long[] {lo, lo + 1, lo + 2, lo + 3, hi, hi - 1, hi - 2, (lo + hi) / 2, (lo + hi) / 2 + 1}) {
                if (q % 2 == 0 || q < lo || q > hi) {
                    continue;
                }
                long mid = q * p5;
                for (long m : new long[] {(mid - 1) / 2, (mid + 1) / 2}) {
                    for (int e = j + 1; e <= j + 40 && m >= (1L << 23) && m < (1L << 24); e++) {
                        f(Math.scalb((float) m, e));
                    }
                }
            }
        }
    }

    private static long pow5(int j) {
        long p = 1;
        for (int i = 0; i < j; i++) {
            p *= 5;
        }
        return p;
    }

    private void neighbours(double x, int n) throws IOException {
        double up = x;
        double down = x;
        d(x);
        for (int i = 0; i < n; i++) {
            up = Math.nextUp(up);
            down = Math.nextDown(down);
            d(up);
            d(down);
        }
    }

    private void fNeighbours(float x, int n) throws IOException {
        float up = x;
        float down = x;
        f(x);
        for (int i = 0; i < n; i++) {
            up = Math.nextUp(up);
            down = Math.nextDown(down);
            f(up);
            f(down);
        }
    }

    private void d(double x) throws IOException {
        out.write("d " + Long.toHexString(Double.doubleToRawLongBits(x)) + " " + Double.toString(x) + "\n");
        out.write("d " + Long.toHexString(Double.doubleToRawLongBits(-x)) + " " + Double.toString(-x) + "\n");
    }

    private void f(float x) throws IOException {
        out.write("f " + Integer.toHexString(Float.floatToRawIntBits(x)) + " " + Float.toString(x) + "\n");
        out.write("f " + Integer.toHexString(Float.floatToRawIntBits(-x)) + " " + Float.toString(-x) + "\n");
    }
}
