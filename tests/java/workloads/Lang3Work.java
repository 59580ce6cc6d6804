import org.apache.commons.lang3.ArrayUtils;
import org.apache.commons.lang3.BooleanUtils;
import org.apache.commons.lang3.CharUtils;
import org.apache.commons.lang3.ObjectUtils;
import org.apache.commons.lang3.RandomStringUtils;
import org.apache.commons.lang3.StringEscapeUtils;
import org.apache.commons.lang3.StringUtils;
import org.apache.commons.lang3.Validate;
import org.apache.commons.lang3.builder.CompareToBuilder;
import org.apache.commons.lang3.builder.EqualsBuilder;
import org.apache.commons.lang3.builder.HashCodeBuilder;
import org.apache.commons.lang3.builder.ToStringBuilder;
import org.apache.commons.lang3.builder.ToStringStyle;
import org.apache.commons.lang3.math.NumberUtils;
import org.apache.commons.lang3.text.StrBuilder;
import org.apache.commons.lang3.time.DateFormatUtils;
import org.apache.commons.lang3.time.DurationFormatUtils;

import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.TimeZone;

/**
 * A deterministic workload over Apache Commons Lang 3 (written against 3.12).
 *
 * <p>Generates many strings, numbers and arrays from a seeded linear congruential generator and
 * passes them through StringUtils, ArrayUtils, NumberUtils, BooleanUtils, CharUtils,
 * StringEscapeUtils, RandomStringUtils (with a seeded {@link Random}), ObjectUtils, Validate (the
 * exceptions are caught and their class names printed), the builder package (ToStringBuilder with a
 * style that prints no identity hash codes, EqualsBuilder, HashCodeBuilder, CompareToBuilder),
 * DateFormatUtils / DurationFormatUtils on fixed UTC instants and text.StrBuilder. Every result is
 * folded into a checksum; a sample of them is printed. WordUtils lives in commons-text and is not
 * exercised.
 *
 * <pre>
 *   java -cp commons-lang3.jar:CLASSES Lang3Work [ROUNDS]
 * </pre>
 */
@SuppressWarnings("deprecation")
public final class Lang3Work {
    private static long seed = 0x9E3779B97F4A7C15L;
    private static long checksum = 0xcbf29ce484222325L;
    private static int lines;

    private static final String ALPHABET =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789     ,.;:-_!?'\"<>&/\\\t\n"
            + "\u00e9\u00df\u4e2d\u2603";

    private Lang3Work() {}

    private static int nextInt(int bound) {
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        return (int) ((seed >>> 33) % bound);
    }

    private static String nextString(int maxLen) {
        int len = nextInt(maxLen + 1);
        StringBuilder sb = new StringBuilder(len);
        int mode = nextInt(4);
        for (int i = 0; i < len; i++) {
            if (mode == 0) {
                sb.append((char) ('0' + nextInt(10)));  // all digits: exercises isNumeric and friends
            } else if (mode == 1) {
                sb.append((char) ('a' + nextInt(6)));  // a small alphabet: many repeats and matches
            } else {
                sb.append(ALPHABET.charAt(nextInt(ALPHABET.length())));
            }
        }
        return sb.toString();
    }

    private static void mix(long v) {
        for (int i = 0; i < 8; i++) {
            checksum ^= (v >>> (8 * i)) & 0xff;
            checksum *= 0x100000001b3L;
        }
    }

    private static void mix(String s) {
        if (s == null) {
            mix(-1L);
            return;
        }
        mix(s.length());
        for (int i = 0; i < s.length(); i++) {
            mix((long) s.charAt(i));
        }
    }

    private static void mix(Object o) {
        mix(o == null ? null : o instanceof Object[] ? Arrays.deepToString((Object[]) o) : String.valueOf(o));
    }

    /** Printable form: control characters and non-ASCII escaped, so the output is plain ASCII. */
    private static String q(Object o) {
        if (o == null) {
            return "null";
        }
        String s = String.valueOf(o);
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\n') {
                sb.append("\\n");
            } else if (c == '\t') {
                sb.append("\\t");
            } else if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    private static void out(String s) {
        System.out.println(s);
        lines++;
        mix(s);
    }

    private static String attempt(Runnable r) {
        try {
            r.run();
            return "ok";
        } catch (RuntimeException e) {
            return e.getClass().getName();
        }
    }

    /** A small value class for the builders. */
    static final class Point implements Comparable<Point> {
        final int x;
        final long y;
        final String label;
        final double[] weights;

        Point(int x, long y, String label, double[] weights) {
            this.x = x;
            this.y = y;
            this.label = label;
            this.weights = weights;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Point)) {
                return false;
            }
            Point p = (Point) o;
            return new EqualsBuilder().append(x, p.x).append(y, p.y).append(label, p.label)
                    .append(weights, p.weights).isEquals();
        }

        @Override
        public int hashCode() {
            return new HashCodeBuilder(17, 37).append(x).append(y).append(label).append(weights).toHashCode();
        }

        @Override
        public String toString() {
            return new ToStringBuilder(this, ToStringStyle.SHORT_PREFIX_STYLE).append("x", x).append("y", y)
                    .append("label", label).append("weights", weights).toString();
        }

        @Override
        public int compareTo(Point o) {
            return new CompareToBuilder().append(x, o.x).append(y, o.y).append(label, o.label).toComparison();
        }
    }

    private static void strings(int k, boolean show) {
        String a = nextString(24);
        String b = nextString(24);
        String sep = k % 3 == 0 ? "," : k % 3 == 1 ? " " : null;
        String abbreviated = a.length() >= 4 ? StringUtils.abbreviate(a, 4 + k % 8) : a;
        String centered = StringUtils.center(a, 10 + k % 20, '*');
        String[] parts = StringUtils.split(a, sep);
        String joined = StringUtils.join(parts, "|");
        String replaced = StringUtils.replace(a, "a", "<A>");
        String capitalized = StringUtils.capitalize(a);
        String swapped = StringUtils.swapCase(a);
        String difference = StringUtils.difference(a, b);
        int indexOfDifference = StringUtils.indexOfDifference(a, b);
        int lev = StringUtils.getLevenshteinDistance(a, b);
        int levBounded = StringUtils.getLevenshteinDistance(a, b, 5);
        double jw = StringUtils.getJaroWinklerDistance(a, b);
        boolean numeric = StringUtils.isNumeric(a);
        boolean blank = StringUtils.isBlank(a);
        boolean alpha = StringUtils.isAlphaSpace(a);
        String common = StringUtils.getCommonPrefix(a, b, a + b);
        int matches = StringUtils.countMatches(a + b, "a");
        String reversed = StringUtils.reverseDelimited(a, ' ');
        String padded = StringUtils.leftPad(StringUtils.rightPad(a, 8, '.'), 16, "-=");
        String stripped = StringUtils.strip(a, " .,");
        String normalized = StringUtils.normalizeSpace(a);
        String chomped = StringUtils.chomp(a);
        String between = StringUtils.substringBetween(a + b, "a", "b");
        String[] splitByType = StringUtils.splitByCharacterTypeCamelCase(a);
        String wrapped = StringUtils.wrapIfMissing(a, "'");
        String overlaid = StringUtils.overlay(a, "##", 2, 5);
        String rotated = StringUtils.rotate(a, k % 7 - 3);
        String truncated = StringUtils.truncate(a + b, 3, 9);
        String defaulted = StringUtils.defaultIfBlank(a, "<blank>");
        String initials = StringUtils.getDigits(a);
        boolean startsAny = StringUtils.startsWithAny(a, "a", "b", "1");
        int idx = StringUtils.indexOfAny(a, "xyz0");
        String[] substrings = StringUtils.substringsBetween("[" + a + "][" + b + "]", "[", "]");
        Object[] results = {abbreviated, centered, parts, joined, replaced, capitalized, swapped, difference,
            indexOfDifference, lev, levBounded, jw, numeric, blank, alpha, common, matches, reversed, padded,
            stripped, normalized, chomped, between, splitByType, wrapped, overlaid, rotated, truncated, defaulted,
            initials, startsAny, idx, substrings};
        for (Object o : results) {
            mix(o);
        }
        if (show) {
            out("str " + k + " a=" + q(a) + " b=" + q(b));
            out("  abbrev=" + q(abbreviated) + " center=" + q(centered) + " join=" + q(joined));
            out("  replace=" + q(replaced) + " cap=" + q(capitalized) + " diff=" + q(difference) + "@"
                    + indexOfDifference);
            out("  lev=" + lev + "/" + levBounded + " jw=" + String.format(Locale.ROOT, "%.4f", jw) + " numeric="
                    + numeric + " blank=" + blank + " alphaSpace=" + alpha + " matches=" + matches);
            out("  pad=" + q(padded) + " strip=" + q(stripped) + " norm=" + q(normalized) + " camel="
                    + q(Arrays.toString(splitByType)));
            out("  overlay=" + q(overlaid) + " rotate=" + q(rotated) + " truncate=" + q(truncated) + " digits="
                    + q(initials) + " between=" + q(between) + " idx=" + idx);
        }
    }

    private static void arrays(int k, boolean show) {
        int n = nextInt(12);
        int[] ints = new int[n];
        for (int i = 0; i < n; i++) {
            ints[i] = nextInt(200) - 100;
        }
        int[] added = ArrayUtils.add(ints, nextInt(50));
        int[] inserted = ArrayUtils.insert(n / 2, ints, 7, 8, 9);
        int[] removed = n > 0 ? ArrayUtils.remove(ints, nextInt(n)) : ints;
        int[] removedAll = ArrayUtils.removeAllOccurrences(added, 7);
        int[] reversed = ArrayUtils.clone(ints);
        ArrayUtils.reverse(reversed);
        int[] shifted = ArrayUtils.clone(ints);
        ArrayUtils.shift(shifted, k % 5);
        int[] sub = ArrayUtils.subarray(ints, 1, 1 + k % 6);
        Integer[] boxed = ArrayUtils.toObject(ints);
        Integer[] withNull = ArrayUtils.add(boxed, null);
        int[] unboxed = ArrayUtils.toPrimitive(withNull, -1);
        boolean sorted = ArrayUtils.isSorted(ints);
        int index = ArrayUtils.indexOf(ints, 0);
        boolean contains = ArrayUtils.contains(ints, 42);
        String[] strings = {"b", "a", null, "c"};
        String[] noNulls = ArrayUtils.removeElement(strings, null);
        Object[] results = {Arrays.toString(added), Arrays.toString(inserted), Arrays.toString(removed),
            Arrays.toString(removedAll), Arrays.toString(reversed), Arrays.toString(shifted), Arrays.toString(sub),
            Arrays.toString(unboxed), sorted, index, contains, Arrays.toString(noNulls),
            ArrayUtils.toString(ints), ArrayUtils.hashCode(ints), ArrayUtils.isSameLength(ints, sub)};
        for (Object o : results) {
            mix(o);
        }
        if (show) {
            out("arr " + k + " in=" + Arrays.toString(ints) + " add=" + Arrays.toString(added) + " insert="
                    + Arrays.toString(inserted));
            out("  remove=" + Arrays.toString(removed) + " reverse=" + Arrays.toString(reversed) + " shift="
                    + Arrays.toString(shifted) + " sub=" + Arrays.toString(sub));
            out("  toPrimitive=" + Arrays.toString(unboxed) + " sorted=" + sorted + " indexOf0=" + index
                    + " noNulls=" + Arrays.toString(noNulls));
        }
    }

    private static void numbers(int k, boolean show) {
        String[] candidates = {nextString(6), Integer.toString(nextInt(100000) - 50000),
            nextInt(1000) + "." + nextInt(1000), "0x" + Integer.toHexString(nextInt(1 << 20)), nextInt(100) + "L",
            nextInt(100) + "e" + nextInt(5), "-" + nextInt(100) + ".5f", "", "  12", "1__2"};
        StringBuilder line = new StringBuilder("num " + k);
        for (String c : candidates) {
            String created;
            try {
                Number number = NumberUtils.createNumber(c);
                created = number == null ? "null" : number.getClass().getSimpleName() + ":" + number;
            } catch (NumberFormatException e) {
                created = "NFE";
            }
            String r = c + "->" + NumberUtils.toInt(c, -1) + "/" + NumberUtils.toDouble(c, -1.5) + "/"
                    + NumberUtils.isCreatable(c) + "/" + NumberUtils.isParsable(c) + "/" + NumberUtils.isDigits(c)
                    + "/" + created;
            mix(r);
            line.append(' ').append(q(r));
        }
        int x = nextInt(1000) - 500;
        int y = nextInt(1000) - 500;
        int z = nextInt(1000) - 500;
        String extremes = NumberUtils.max(x, y, z) + "," + NumberUtils.min(x, y, z) + ","
                + NumberUtils.compare(x, y) + "," + NumberUtils.max(new double[] {x / 3.0, y / 7.0}) + ","
                + NumberUtils.toScaledBigDecimal(x / 7.0);
        mix(extremes);
        boolean b1 = (k & 1) != 0;
        boolean b2 = (k & 2) != 0;
        String bools = BooleanUtils.toStringYesNo(b1) + "," + BooleanUtils.toStringOnOff(b2) + ","
                + BooleanUtils.xor(new boolean[] {b1, b2, true}) + "," + BooleanUtils.and(new boolean[] {b1, b2}) + ","
                + BooleanUtils.toBooleanObject(candidates[0]) + "," + BooleanUtils.toBoolean(k % 3 == 0 ? "yes" : "no")
                + "," + BooleanUtils.toInteger(b1) + "," + BooleanUtils.negate(b2 ? Boolean.TRUE : null) + ","
                + BooleanUtils.compare(b1, b2);
        mix(bools);
        char ch = ALPHABET.charAt(nextInt(ALPHABET.length()));
        String chars = CharUtils.isAsciiAlpha(ch) + "," + CharUtils.isAsciiNumeric(ch) + ","
                + CharUtils.isAsciiPrintable(ch) + "," + CharUtils.toIntValue(ch, -1) + ","
                + CharUtils.unicodeEscaped(ch) + "," + CharUtils.isAscii(ch) + "," + CharUtils.compare(ch, 'm');
        mix(chars);
        if (show) {
            out(line.toString());
            out("  extremes=" + extremes + " bools=" + bools + " chars=" + q(chars));
        }
    }

    private static void escapes(int k, boolean show) {
        String s = nextString(20);
        String java = StringEscapeUtils.escapeJava(s);
        String html = StringEscapeUtils.escapeHtml4(s);
        String xml = StringEscapeUtils.escapeXml10(s);
        String csv = StringEscapeUtils.escapeCsv(s);
        String json = StringEscapeUtils.escapeJson(s);
        boolean roundTrip = StringEscapeUtils.unescapeJava(java).equals(s)
                && StringEscapeUtils.unescapeHtml4(html).equals(s) && StringEscapeUtils.unescapeCsv(csv).equals(s);
        mix(java);
        mix(html);
        mix(xml);
        mix(csv);
        mix(json);
        mix(roundTrip ? 1 : 0);
        if (show) {
            out("esc " + k + " java=" + q(java) + " html=" + q(html) + " csv=" + q(csv) + " roundTrip=" + roundTrip);
        }
    }

    private static void objectsAndBuilders(int k, boolean show) {
        double[] w = {nextInt(10) / 4.0, nextInt(10) / 8.0};
        Point p = new Point(nextInt(5), nextInt(3), k % 4 == 0 ? null : "p" + nextInt(3), w);
        Point q = new Point(nextInt(5), nextInt(3), k % 5 == 0 ? null : "p" + nextInt(3), w.clone());
        String objects = ObjectUtils.defaultIfNull(p.label, "dflt") + "," + ObjectUtils.firstNonNull(null, q.label, "z")
                + "," + ObjectUtils.compare(p.label, q.label, true) + "," + ObjectUtils.max(3, k % 7, 5) + ","
                + ObjectUtils.median("b", "a", "d", "c") + "," + ObjectUtils.allNotNull(p.label, q.label) + ","
                + ObjectUtils.toString(null, "nil") + "," + ObjectUtils.isEmpty(p.label) + ","
                + ObjectUtils.mode(1, 2, 2, k % 3);
        String built = p + " " + q + " eq=" + p.equals(q) + " hashEq=" + (p.hashCode() == q.hashCode()) + " cmp="
                + Integer.signum(p.compareTo(q)) + " hash=" + p.hashCode() + " reflEq="
                + EqualsBuilder.reflectionEquals(p, q, false);
        mix(objects);
        mix(built);
        String[] validations = {
            attempt(() -> Validate.notNull(p.label, "label")),
            attempt(() -> Validate.isTrue(p.x > 1, "x must exceed 1: %d", p.x)),
            attempt(() -> Validate.notEmpty(p.label)),
            attempt(() -> Validate.inclusiveBetween(0, 2, p.x)),
            attempt(() -> Validate.validIndex(new Object[p.x], 1)),
            attempt(() -> Validate.matchesPattern(q.label == null ? "" : q.label, "p[0-1]")),
            attempt(() -> Validate.noNullElements(new Object[] {p.label, q.label})),
            attempt(() -> Validate.notBlank(k % 2 == 0 ? " " : "x")),
        };
        String v = String.join(",", validations);
        mix(v);
        if (show) {
            out("obj " + k + " " + objects);
            out("  " + built);
            out("  validate=" + v);
        }
    }

    private static void random(int k, boolean show) {
        Random random = new Random(1000L + k);
        String letters = RandomStringUtils.random(8 + k % 5, 0, 0, true, false, null, random);
        String digits = RandomStringUtils.random(6, 0, 0, false, true, null, random);
        String pick = RandomStringUtils.random(10, 0, 6, false, false, "xyzXYZ".toCharArray(), random);
        String range = RandomStringUtils.random(5, 'a', 'g', false, false, null, random);
        mix(letters + digits + pick + range);
        if (show) {
            out("rnd " + k + " " + letters + " " + digits + " " + pick + " " + range);
        }
    }

    private static void timeAndText(int k, boolean show) {
        TimeZone utc = TimeZone.getTimeZone("UTC");
        long millis = 1_600_000_000_000L + (long) k * 86_399_123L * 17;
        String iso = DateFormatUtils.format(millis, "yyyy-MM-dd'T'HH:mm:ss.SSSZZ", utc, Locale.ROOT);
        String longForm = DateFormatUtils.format(millis, "EEEE d MMMM yyyy, w 'week', D 'day of year'", utc,
                Locale.ROOT);
        String isoPattern = DateFormatUtils.format(millis,
                DateFormatUtils.ISO_8601_EXTENDED_DATETIME_TIME_ZONE_FORMAT.getPattern(), utc, Locale.ROOT);
        String utcFormat = DateFormatUtils.formatUTC(millis, "HH:mm:ss");
        String duration = DurationFormatUtils.formatDuration((long) k * 3_723_004L, "H:mm:ss.SSS");
        String words = DurationFormatUtils.formatDurationWords((long) k * 93_784_000L, true, true);
        StrBuilder sb = new StrBuilder();
        sb.append("k=").append(k).appendSeparator(';').appendFixedWidthPadLeft(k, 6, '0').appendSeparator(';')
                .appendFixedWidthPadRight(iso, 12, '_').appendWithSeparators(new Object[] {"x", k % 3, null}, "/")
                .appendNull().append(' ').appendAll(new Object[] {"a", "b", k});
        sb.replaceAll("0", "o").reverse().insert(0, '[').append(']');
        String text = sb.toString() + " len=" + sb.length() + " idx=" + sb.indexOf("o") + " cap=" + sb.contains('k');
        mix(iso);
        mix(longForm);
        mix(isoPattern);
        mix(utcFormat);
        mix(duration);
        mix(words);
        mix(text);
        if (show) {
            out("time " + k + " " + iso + " | " + longForm + " | " + utcFormat + " | " + duration + " | " + words);
            out("  iso=" + isoPattern + " strbuilder=" + q(text));
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        for (int k = 0; k < rounds; k++) {
            boolean show = k % 20 == 0;
            strings(k, show);
            arrays(k, show);
            numbers(k, show);
            escapes(k, show);
            objectsAndBuilders(k, show);
            random(k, show);
            if (k % 2 == 0) {
                timeAndText(k, show);
            }
        }
        out("lines=" + (lines + 1) + " checksum=" + Long.toHexString(checksum));
    }
}
