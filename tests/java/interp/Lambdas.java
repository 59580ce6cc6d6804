import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.IntBinaryOperator;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

// Purpose-written checks of the interpreter's LambdaMetafactory and ObjectMethods models (tests/test_interp.py):
// capturing and non-capturing lambdas, method references of every kind, boxing/unboxing/widening between the
// erased interface method and the implementation, call-site identity, records' toString/equals/hashCode.
public class Lambdas {
    interface Op {
        int apply(int a, int b);

        default int twice(int a, int b) {
            return apply(apply(a, b), b);
        }
    }

    record Point(int x, String name, long l, boolean z, char c) {}

    record Empty() {}

    record Wrap(Integer i, Object o, byte b, short s) {}

    private int base;

    Lambdas(int base) {
        this.base = base;
    }

    private int plus(int x) {
        return base + x;
    }

    static int twiceOf(int x) {
        return 2 * x;
    }

    static String capturing(int k, String s) {
        IntBinaryOperator add = (a, b) -> a + b + k;
        Op mul = (a, b) -> a * b - k;
        Function<String, Integer> len = String::length;
        Function<Integer, Integer> inc = x -> x + k;
        BiFunction<String, Integer, String> rep = (t, n) -> t + n;
        IntFunction<String> str = Integer::toString;
        IntPredicate even = x -> (x & 1) == 0;
        ToIntFunction<Integer> unbox = Integer::intValue;
        Supplier<Lambdas> make = () -> new Lambdas(k);
        Function<Integer, Lambdas> ctor = Lambdas::new;
        Function<Integer, Integer> inst = new Lambdas(k)::plus;
        Function<Integer, Integer> stat = Lambdas::twiceOf;
        LongSupplier widen = () -> k;
        String t = s == null ? "null" : s;
        return add.applyAsInt(k, 3) + " " + mul.apply(k, 5) + " " + mul.twice(k, 2) + " " + len.apply(t) + " "
                + inc.apply(k) + " " + rep.apply(t, k) + " " + str.apply(k) + " " + even.test(k) + " "
                + unbox.applyAsInt(k) + " " + make.get().base + " " + ctor.apply(k).base + " " + inst.apply(7) + " "
                + stat.apply(k) + " " + widen.getAsLong() + " " + (inc.apply(100) == inc.apply(100)) + " "
                + (inc.apply(1000 + k) == inc.apply(1000 + k)) + " " + (add instanceof IntBinaryOperator) + " "
                + ((Object) add instanceof Function) + " " + add.equals(add) + " " + add.equals(mul);
    }

    static String identity(int n) {
        StringBuilder sb = new StringBuilder();
        Object first = null;
        Object firstCapturing = null;
        for (int i = 0; i < 3; i++) {
            Runnable r = () -> {};
            final int j = i + n;
            Supplier<Integer> c = () -> j;
            if (first == null) {
                first = r;
                firstCapturing = c;
            }
            sb.append(first == r).append(firstCapturing == c).append(c.get()).append(',');
        }
        return sb.toString();
    }

    static Object castFailure(int mode) {
        Function<String, Integer> len = String::length;
        @SuppressWarnings({"unchecked", "rawtypes"})
        Function<Object, Object> raw = (Function) len;
        Function<Integer, Integer> inc = x -> x + 1;
        @SuppressWarnings({"unchecked", "rawtypes"})
        Function<Object, Object> rawInc = (Function) inc;
        switch (mode) {
            case 0: return raw.apply("abc");
            case 1: return raw.apply(5);
            case 2: return raw.apply(null);
            case 3: return rawInc.apply(null);
            case 4: return rawInc.apply("x");
            default: return rawInc.apply(mode);
        }
    }

    static String records(int x, String s, boolean z) {
        Point p = new Point(x, s, (long) x * 1000003, z, (char) ('a' + (x & 7)));
        Point q = new Point(x, s, (long) x * 1000003, z, (char) ('a' + (x & 7)));
        Point r = new Point(x + 1, s, 0, !z, 'q');
        Wrap w = new Wrap(x, s, (byte) x, (short) x);
        return p + " " + p.equals(q) + " " + p.equals(r) + " " + p.equals(null) + " " + p.equals(s) + " "
                + p.hashCode() + " " + (p.hashCode() == q.hashCode()) + " " + r.hashCode() + " " + new Empty() + " "
                + new Empty().hashCode() + " " + new Empty().equals(new Empty()) + " " + w + " " + w.hashCode() + " "
                + w.equals(new Wrap(x, s, (byte) x, (short) x)) + " " + w.equals(new Wrap(x, null, (byte) x, (short) x));
    }
}
