import java.util.Arrays;
import java.util.Locale;

// Purpose-written checks of the interpreter's text models (peggy_jvm/jdk/) for tests/test_interp.py:
// Double.toString and Float.toString everywhere Java converts a float or double to text (concatenation,
// StringBuilder.append/insert, String.valueOf, print, Arrays.toString), parsing, and the String methods of
// Java 11+ (strip, isBlank, lines), split by simple regexes, join, the constructors. Text the models refuse on
// purpose (non-ASCII case mapping, platform charsets) is kept out with an explicit ASCII guard.
public class TextModels {
    static boolean ascii(String s) {
        for (int i = 0; i < s.length(); i++) if (s.charAt(i) >= 128) return false;
        return true;
    }

    static String doubles(double d, float f) {
        StringBuilder sb = new StringBuilder().append(d).append(' ').append(f).append(' ');
        sb.insert(0, f).insert(0, d);
        System.out.print(d);
        System.out.println(f);
        return sb + "|" + d + "|" + f + "|" + String.valueOf(d) + String.valueOf(f) + Double.toString(d)
                + Float.toString(f) + Double.valueOf(d) + Float.valueOf(f) + (d * 1e300) + (f / 3) + (float) d
                + Arrays.toString(new double[] {d, -d, d / 7}) + Arrays.toString(new float[] {f, f * f});
    }

    static String scaled(int a, int e) {
        double d = a * Double.parseDouble("1e" + (Math.floorMod(e, 40) - 20));
        return d + " " + (float) d + " " + (d + 0.1) + " " + (1.0 / a) + " " + (a / 1000.0) + " " + (a * 1e7);
    }

    static String parse(String s) {
        StringBuilder sb = new StringBuilder();
        try { sb.append(Double.parseDouble(s)); } catch (NumberFormatException e) { sb.append("nfe"); } catch (NullPointerException e) { sb.append("npe"); }
        try { sb.append(' ').append(Float.parseFloat(s)); } catch (NumberFormatException e) { sb.append(" nfe"); } catch (NullPointerException e) { sb.append(" npe"); }
        for (String t : new String[] {"1e3", " -0.5f ", "1.", ".5E-2d", "NaN", "-Infinity", "1e", "e5", ".", "0x", "1_0", "+7", "3.4028235e38", "1e-46", "1.17549435E-38"}) {
            try { sb.append(' ').append(Double.parseDouble(t)).append('/').append(Float.parseFloat(t)); } catch (NumberFormatException e) { sb.append(" nfe"); }
        }
        return sb.toString();
    }

    static String strings(String s, int k) {
        if (s == null) return "null";
        StringBuilder sb = new StringBuilder();
        sb.append('[').append(s.strip()).append("][").append(s.stripLeading()).append("][").append(s.stripTrailing())
          .append(']').append(s.isBlank()).append(" \u2003x\u00a0 ".strip()).append("\u2003 \t".isBlank());
        sb.append(Arrays.toString(s.split(","))).append(Arrays.toString(s.split("[ a]+")))
          .append(Arrays.toString(("a,b,," + s + ",,").split(","))).append(Arrays.toString(s.split("\\.")))
          .append(Arrays.toString((s + "a1b22c3").split("[0-9]+"))).append(Arrays.toString(s.split("[b-dX-Z]")));
        sb.append(String.join("-", s, "x", null)).append(String.join("", new String[0]));
        sb.append(new String(s.toCharArray())).append(new String(new char[] {'a', 'b', 'c'}, 1, 2)).append(new String(s));
        try { sb.append(new String(new char[] {'a'}, k, 1)); } catch (StringIndexOutOfBoundsException e) { sb.append("sioobe"); }
        sb.append(Integer.toString(k, 16)).append(Integer.toString(k, 2)).append(Integer.toString(k, 99))
          .append(Long.toString(k * 1000003L, 36)).append(Character.isWhitespace(s.isEmpty() ? ' ' : s.charAt(0)));
        CharSequence cs = s;
        sb.append(cs.length()).append(cs.subSequence(0, Math.min(2, s.length())));
        if (ascii(s)) {
            sb.append(s.toUpperCase(Locale.ROOT)).append(s.toLowerCase(Locale.ROOT)).append(Arrays.toString(s.getBytes()))
              .append(new String(s.getBytes()));
        }
        return sb.toString();
    }
}
