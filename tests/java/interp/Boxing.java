// Purpose-written checks of the interpreter's boxing models (tests/test_interp.py): valueOf and its caches
// (identity), xxxValue conversions, equals/hashCode/compareTo of every wrapper, Boolean.TRUE/FALSE.
public class Boxing {
    static String ints(int x, int y) {
        Integer a = x, b = x, c = y;
        Object o = c;
        return (a == b) + " " + a.equals(b) + " " + a.equals(c) + " " + a.hashCode() + " " + a.compareTo(c) + " "
                + a.byteValue() + " " + a.shortValue() + " " + a.longValue() + " "
                + Float.floatToIntBits(a.floatValue()) + " " + Double.doubleToLongBits(a.doubleValue()) + " "
                + ((Comparable<Object>) (Object) a).compareTo(o) + " " + a.equals(o) + " " + a + " "
                + (o instanceof Number) + " " + Integer.hashCode(y) + " " + a.equals((long) x);
    }

    static String longs(long x, int y) {
        Long a = x, b = x, c = (long) y;
        return (a == b) + " " + a.equals(b) + " " + a.equals(c) + " " + a.hashCode() + " " + a.compareTo(c) + " "
                + a.byteValue() + " " + a.shortValue() + " " + a.intValue() + " "
                + Float.floatToIntBits(a.floatValue()) + " " + Double.doubleToLongBits(a.doubleValue()) + " " + a
                + " " + Long.hashCode(x) + " " + a.equals(x);
    }

    static String smalls(short s, byte b, char c, boolean z) {
        Short s1 = s, s2 = s;
        Byte b1 = b, b2 = b;
        Character c1 = c, c2 = c;
        Boolean z1 = z, z2 = z;
        return (s1 == s2) + " " + (b1 == b2) + " " + (c1 == c2) + " " + (z1 == z2) + " " + s1.hashCode() + " "
                + b1.hashCode() + " " + c1.hashCode() + " " + z1.hashCode() + " " + s1.compareTo((short) 7) + " "
                + b1.compareTo((byte) -3) + " " + c1.compareTo('m') + " " + z1.compareTo(true) + " "
                + z1.compareTo(false) + " " + (z1 == Boolean.TRUE) + " " + (z1 == Boolean.FALSE) + " "
                + s1.intValue() + " " + b1.longValue() + " " + (int) c1.charValue() + " " + z1.booleanValue() + " "
                + s1 + b1 + z1 + " " + s1.equals(b1) + " " + Character.compare(c, 'a') + " " + Boolean.compare(z, true)
                + " " + Short.compare(s, (short) -5) + " " + Byte.compare(b, (byte) 100);
    }

    static String floats(float f, double d) {
        Float f1 = f, f2 = f;
        Double d1 = d, d2 = d;
        return (f1 == f2) + " " + (d1 == d2) + " " + f1.equals(f2) + " " + d1.equals(d2) + " " + f1.hashCode() + " "
                + d1.hashCode() + " " + f1.compareTo(0.0f) + " " + d1.compareTo(-0.0) + " " + f1.intValue() + " "
                + f1.longValue() + " " + f1.byteValue() + " " + f1.shortValue() + " " + d1.intValue() + " "
                + d1.longValue() + " " + d1.byteValue() + " " + d1.shortValue() + " "
                + Float.floatToIntBits(d1.floatValue()) + " " + Double.doubleToLongBits(f1.doubleValue()) + " "
                + f1.equals(Float.NaN) + " " + d1.equals(0.0) + " " + Float.hashCode(f) + " " + Double.hashCode(d);
    }

    static Integer boxed(int x) {
        return x;
    }

    static Object unboxNull(int mode) {
        Integer i = mode == 0 ? null : Integer.valueOf(mode);
        Comparable<Object> c = (Comparable<Object>) (Object) Integer.valueOf(3);
        if (mode == 1) return c.compareTo("x");
        if (mode == 2) return c.compareTo(null);
        return i + 1;
    }

    static String arrays(int[] xs, String[] ss, int n) {
        Object[] objs = {xs, ss, n, null, (long) n, (char) ('a' + (n & 7)), n > 0};
        Object[] self = {1, null, ss};
        Object[] nested = {self, new Object[]{self, new Object[0]}, new short[]{(short) n}};
        self[1] = nested;
        return java.util.Arrays.toString(ss) + " " + java.util.Arrays.toString(new Object[]{n, "s", null, true})
                + " " + java.util.Arrays.deepToString(new Object[]{xs, ss, n, null}) + " "
                + java.util.Arrays.deepToString(ss) + " " + java.util.Arrays.deepToString(self) + " "
                + java.util.Arrays.deepToString(nested) + " " + java.util.Arrays.deepToString(new Object[0][]) + " "
                + (n == 3 ? java.util.Arrays.deepToString(null) : "") + java.util.Arrays.toString((Object[]) null)
                + objs.length;
    }
}
