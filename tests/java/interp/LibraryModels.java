// Purpose-written checks of the interpreter's library models (peggy_jvm/jdk/, DefaultCallHandler) for
// tests/test_interp.py: each method calls a group of modelled library methods, including their exceptions,
// and the interpreter must agree with the JVM on generated arguments. Text the models refuse on purpose
// (Unicode tables: non-ASCII case mapping and character classes) is kept out with an explicit ASCII guard.
public class LibraryModels {
    static boolean ascii(String s) {
        for (int i = 0; i < s.length(); i++) if (s.charAt(i) >= 128) return false;
        return true;
    }

    static String intHelpers(int x, int k) {
        return Integer.toHexString(x) + ' ' + Integer.toBinaryString(x) + ' ' + Integer.toOctalString(x) + ' '
                + Integer.bitCount(x) + ' ' + Integer.numberOfLeadingZeros(x) + ' ' + Integer.numberOfTrailingZeros(x)
                + ' ' + Integer.highestOneBit(x) + ' ' + Integer.lowestOneBit(x) + ' ' + Integer.signum(x) + ' '
                + Integer.compare(x, k) + ' ' + Integer.reverse(x) + ' ' + Integer.reverseBytes(x) + ' '
                + Integer.rotateLeft(x, k) + ' ' + Integer.rotateRight(x, k) + ' ' + Math.abs(x) + ' '
                + Math.max(x, k) + ' ' + Math.min(x, k) + ' ' + Integer.sum(x, k) + ' ' + Integer.max(x, k) + ' '
                + Integer.min(x, k) + ' ' + Integer.toString(x) + ' ' + String.valueOf(k);
    }

    static String longHelpers(long x, int k) {
        return Long.toHexString(x) + ' ' + Long.toBinaryString(x) + ' ' + Long.toOctalString(x) + ' '
                + Long.bitCount(x) + ' ' + Long.numberOfLeadingZeros(x) + ' ' + Long.numberOfTrailingZeros(x) + ' '
                + Long.highestOneBit(x) + ' ' + Long.lowestOneBit(x) + ' ' + Long.signum(x) + ' '
                + Long.compare(x, k) + ' ' + Long.reverse(x) + ' ' + Long.reverseBytes(x) + ' '
                + Long.rotateLeft(x, k) + ' ' + Long.rotateRight(x, k) + ' ' + Math.abs(x) + ' ' + Math.max(x, k)
                + ' ' + Math.min(x, (long) k) + ' ' + Long.sum(x, k) + ' ' + Long.toString(x) + ' ' + String.valueOf(x);
    }

    static String exactMath(int a, int b) {
        StringBuilder sb = new StringBuilder();
        try { sb.append(Math.floorDiv(a, b)).append(','); } catch (ArithmeticException e) { sb.append("fd0,"); }
        try { sb.append(Math.floorMod(a, b)).append(','); } catch (ArithmeticException e) { sb.append("fm0,"); }
        try { sb.append(Math.floorDiv((long) a * 3, (long) b)).append(','); } catch (ArithmeticException e) { sb.append("lfd0,"); }
        try { sb.append(Math.floorMod((long) a, (long) b)).append(','); } catch (ArithmeticException e) { sb.append("lfm0,"); }
        try { sb.append(Math.addExact(a, b)).append(','); } catch (ArithmeticException e) { sb.append(e.getMessage()).append(','); }
        try { sb.append(Math.subtractExact(a, b)).append(','); } catch (ArithmeticException e) { sb.append("sub,"); }
        try { sb.append(Math.multiplyExact(a, b)).append(','); } catch (ArithmeticException e) { sb.append("mul,"); }
        try { sb.append(Math.negateExact(a)).append(','); } catch (ArithmeticException e) { sb.append("neg,"); }
        try { sb.append(Math.multiplyExact((long) a << 20, (long) b << 20)).append(','); } catch (ArithmeticException e) { sb.append(e.getMessage()).append(','); }
        try { sb.append(Math.toIntExact((long) a * b)); } catch (ArithmeticException e) { sb.append("toInt"); }
        return sb.toString();
    }

    static String doubleHelpers(double a, double b) {
        return Long.toHexString(Double.doubleToLongBits(Math.sqrt(a))) + ' '
                + Long.toHexString(Double.doubleToLongBits(Math.floor(a))) + ' '
                + Long.toHexString(Double.doubleToLongBits(Math.ceil(b))) + ' '
                + Long.toHexString(Double.doubleToLongBits(Math.min(a, b))) + ' '
                + Long.toHexString(Double.doubleToLongBits(Math.max(a, b))) + ' '
                + Long.toHexString(Double.doubleToRawLongBits(Math.abs(a))) + ' ' + Double.compare(a, b) + ' '
                + Double.isNaN(a) + Double.isInfinite(b) + Double.isFinite(a) + ' '
                + (Double.longBitsToDouble(Double.doubleToRawLongBits(b)) == b);
    }

    static String floatHelpers(float a, float b) {
        return Integer.toHexString(Float.floatToIntBits(Math.min(a, b))) + ' '
                + Integer.toHexString(Float.floatToIntBits(Math.max(a, b))) + ' '
                + Integer.toHexString(Float.floatToRawIntBits(Math.abs(b))) + ' ' + Float.compare(a, b) + ' '
                + Float.isNaN(a) + Float.isInfinite(b) + Float.isFinite(a) + ' '
                + (Float.intBitsToFloat(Float.floatToRawIntBits(a)) == a);
    }

    static String chars(char c) {
        char a = (char) (c & 0x7f);
        return "" + Character.isDigit(a) + Character.isLetter(a) + Character.isLetterOrDigit(a)
                + Character.isUpperCase(a) + Character.isLowerCase(a) + Character.isWhitespace(a)
                + Character.isAlphabetic(a) + ' ' + Character.toUpperCase(a) + Character.toLowerCase(a) + ' '
                + Character.getNumericValue(a) + Character.toString(a) + String.valueOf(a) + Boolean.toString(a > 'm');
    }

    static String parse(String s) {
        if (s == null || ascii(s)) {
            String r;
            try { r = "i" + Integer.parseInt(s); } catch (NumberFormatException e) { r = "nfe"; }
            try { r += " l" + Long.parseLong(s); } catch (NumberFormatException e) { r += " nfe"; }
            return r;
        }
        return "non-ascii";
    }

    static String parseNumbers(int n) {
        return parse(Integer.toString(n)) + parse("+" + n) + parse(n + "0") + parse(Long.toString(n * 99999L))
                + parse("99999999999") + parse("-") + parse("");
    }

    static String stringMethods(String s, int k) {
        if (s == null) return "null";
        StringBuilder r = new StringBuilder();
        int n = s.length();
        r.append(s.isEmpty()).append(s.indexOf("a")).append(s.indexOf("l", k)).append(s.lastIndexOf("l"))
                .append(s.indexOf('o', k)).append(s.lastIndexOf('l')).append(s.indexOf(0x1F600))
                .append(s.startsWith("he")).append(s.endsWith("lo")).append(s.contains("ll"))
                .append(s.compareTo("hello")).append(s.equals("abc")).append(s.hashCode()).append('|');
        try { r.append(s.substring(k)); } catch (StringIndexOutOfBoundsException e) { r.append("sioobe"); }
        try { r.append(s.substring(1, k)); } catch (StringIndexOutOfBoundsException e) { r.append("sioobe2"); }
        r.append('|').append(s.replace('l', 'L')).append(s.replace("ll", "")).append(s.replace("", "-"))
                .append(s.trim()).append(s.concat(s)).append(String.valueOf(s.toCharArray()))
                .append(s.repeat(k & 3)).append(s.intern()).append(s.toString());
        try { r.append(s.repeat(k < 0 ? k : k & 7)); } catch (IllegalArgumentException e) { r.append("iae"); }
        if (ascii(s)) r.append(s.toUpperCase()).append(s.toLowerCase()).append(s.equalsIgnoreCase("HELLO"));
        return r.toString();
    }

    static String builderMethods(String s, int k) {
        StringBuilder sb = new StringBuilder(s == null ? "" : s);
        sb.append(k).append(-7L).append(true).append('c').append((Object) null).append((String) null)
                .append(new char[] {'x', 'y'}).append((CharSequence) "cs");
        sb.reverse();
        StringBuilder r = new StringBuilder().append(sb).append('|').append(sb.length()).append(sb.indexOf("y"))
                .append(sb.lastIndexOf("c"));
        try { sb.insert(k, "<ins>"); } catch (StringIndexOutOfBoundsException e) { r.append("i1"); }
        try { sb.insert(k & 3, 'Q').insert(1, 42).insert(0, false).insert(2, 9L); } catch (StringIndexOutOfBoundsException e) { r.append("i2"); }
        try { sb.deleteCharAt(k); } catch (StringIndexOutOfBoundsException e) { r.append("d1"); }
        try { sb.delete(k & 7, k); } catch (StringIndexOutOfBoundsException e) { r.append("d2"); }
        try { sb.replace(1, k, "R"); } catch (StringIndexOutOfBoundsException e) { r.append("r1"); }
        try { sb.setCharAt(k, 'S'); } catch (StringIndexOutOfBoundsException e) { r.append("s1"); }
        try { r.append(sb.charAt(k)); } catch (StringIndexOutOfBoundsException e) { r.append("c1"); }
        try { sb.setLength(k & 15); } catch (StringIndexOutOfBoundsException e) { r.append("l1"); }
        return r.append('|').append(sb).append(sb.isEmpty()).toString();
    }

    static String arrays(int[] a, int from, int to) {
        int[] b = new int[6];
        StringBuilder r = new StringBuilder(java.util.Arrays.toString(a));
        try {
            System.arraycopy(a, from & 3, b, to & 3, 3);
            r.append(java.util.Arrays.toString(b));
            System.arraycopy(b, 0, b, 1, 5);      // overlapping
            r.append(java.util.Arrays.toString(b));
            System.arraycopy(a, from, b, to, a.length);
        } catch (IndexOutOfBoundsException e) {
            r.append(" ioobe:").append(e.getClass().getName()).append(java.util.Arrays.toString(b));
        } catch (NullPointerException e) {
            r.append(" npe");
        }
        Object[] strs = {"a", "b", null};
        Object[] objs = new String[3];
        try {
            System.arraycopy(strs, 0, objs, 0, 3);
            Object[] mixed = {"x", new int[0], "y"};
            System.arraycopy(mixed, 0, objs, 0, 3);
        } catch (ArrayStoreException e) {
            r.append(" ase:").append(objs[0]);
        }
        try {
            System.arraycopy(a, 0, new long[4], 0, 1);
        } catch (ArrayStoreException e) {
            r.append(" ase2");
        } catch (NullPointerException e) {
            r.append(" npe2");
        }
        boolean[] z = {true, false};
        char[] c = {'h', 'i'};
        long[] l = {-1L, Long.MAX_VALUE};
        return r.append(java.util.Arrays.toString(z)).append(java.util.Arrays.toString(c))
                .append(java.util.Arrays.toString(l)).append(java.util.Arrays.toString((byte[]) null)).toString();
    }

    static String objects(String a, String b) {
        String r = "" + java.util.Objects.equals(a, b) + java.util.Objects.equals(a, a);
        try {
            r += java.util.Objects.requireNonNull(a, "msg").length();
        } catch (NullPointerException e) {
            r += "npe:" + e.getMessage();
        }
        try {
            r += java.util.Objects.requireNonNull(b).length();
        } catch (NullPointerException e) {
            r += "npe2";
        }
        return r;
    }
}
