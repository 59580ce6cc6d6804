import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.ConcurrentModificationException;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

// Purpose-written checks of the interpreter's java.util models (peggy_jvm/jdk/) for tests/test_interp.py:
// ArrayList, LinkedList, List.of, Arrays.asList, a HashSet of at most one element, iterators and their
// ConcurrentModificationException, Collections.sort (its exact sequence of comparisons, counted), comparators,
// default methods of functional interfaces, and sequential streams. Sizes are kept below TimSort's 32 (longer
// sorts are not modelled) by reducing the generated arguments.
public class CollectionModels {
    static int compares;

    static int small(int n) {
        return Math.floorMod(n, 25);
    }

    static List<Integer> numbers(int n, int seed) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < small(n); i++) out.add((seed * 31 + i * 17) % 11 - 5);
        return out;
    }

    static String arrayList(int n, int k) {
        List<Integer> xs = numbers(n, k);
        StringBuilder sb = new StringBuilder(xs.toString()).append(' ').append(xs.size()).append(xs.isEmpty());
        try { sb.append(" get=").append(xs.get(k)); } catch (IndexOutOfBoundsException e) { sb.append(" get:").append(e.getClass().getName()); }
        try { sb.append(" set=").append(xs.set(k % 7, 99)); } catch (IndexOutOfBoundsException e) { sb.append(" set:").append(e.getClass().getName()); }
        try { xs.add(k % 5, -1); sb.append(" addAt"); } catch (IndexOutOfBoundsException e) { sb.append(" addAt:").append(e.getClass().getName()); }
        sb.append(" idx=").append(xs.indexOf(3)).append(' ').append(xs.contains(-1)).append(xs.contains(null));
        sb.append(" rmObj=").append(xs.remove(Integer.valueOf(3))).append(' ').append(xs);
        try { sb.append(" rmAt=").append(xs.remove(k % 9)); } catch (IndexOutOfBoundsException e) { sb.append(" rmAt:x"); }
        xs.add(null);
        sb.append(" hash=").append(xs.hashCode()).append(" eq=").append(xs.equals(new ArrayList<>(xs)))
          .append(xs.equals(numbers(n, k))).append(xs.equals(List.of(1))).append(xs.equals("x"));
        int sum = 0;
        for (Integer x : xs) if (x != null) sum += x;
        sb.append(" sum=").append(sum);
        xs.clear();
        return sb.append(' ').append(xs).append(xs.isEmpty()).toString();
    }

    static String linkedList(int n, int k) {
        List<Integer> xs = new LinkedList<>(numbers(n, k));
        xs.add(7);
        xs.add(0, 8);
        StringBuilder sb = new StringBuilder(xs.toString());
        try { sb.append(" get=").append(xs.get(k)); } catch (IndexOutOfBoundsException e) { sb.append(" get:").append(e.getClass().getName()); }
        sb.append(" rm=").append(xs.remove(Integer.valueOf(7))).append(xs.remove(Integer.valueOf(1000)));
        xs.removeIf(x -> x < 0);
        Collections.sort(xs);
        sb.append(' ').append(xs).append(' ').append(xs.hashCode()).append(xs.equals(new ArrayList<>(xs)));
        return sb.toString();
    }

    static String immutables(int n, String s) {
        StringBuilder sb = new StringBuilder();
        List<Object> two = List.of(n, n + 1);
        List<Object> many = List.of(1, "two", 3, s == null ? "null" : s);
        sb.append(two).append(many).append(List.of()).append(List.of() == List.of()).append(two.size());
        try { List.of(1, null); } catch (NullPointerException e) { sb.append(" npe"); }
        try { two.add(3); } catch (UnsupportedOperationException e) { sb.append(" uoe"); }
        try { many.set(0, 1); } catch (UnsupportedOperationException e) { sb.append(" uoe2"); }
        try { sb.append(two.contains(null)); } catch (NullPointerException e) { sb.append(" npe2"); }
        try { sb.append(many.get(n)); } catch (IndexOutOfBoundsException e) { sb.append(" ").append(e.getClass().getName()); }
        try { sb.append(two.get(n)); } catch (IndexOutOfBoundsException e) { sb.append(" ").append(e.getClass().getName()); }
        sb.append(' ').append(many.indexOf(3)).append(two.equals(List.of(n, n + 1))).append(two.hashCode());
        for (Iterator<Object> it = many.iterator(); it.hasNext(); ) sb.append('/').append(it.next());
        return sb.toString();
    }

    static String asList(int n, String s) {
        String[] arr = {"b", s, "a", "c"};
        List<String> xs = Arrays.asList(arr);
        xs.set(0, "z");
        arr[2] = "y";
        StringBuilder sb = new StringBuilder(xs.toString()).append(Arrays.toString(arr));
        try { xs.add("q"); } catch (UnsupportedOperationException e) { sb.append(" uoe"); }
        sb.append(xs.remove("nope"));
        try { xs.remove("z"); } catch (UnsupportedOperationException e) { sb.append(" uoe2"); }
        try { sb.append(xs.get(n)); } catch (IndexOutOfBoundsException e) { sb.append(" ").append(e.getClass().getName()); }
        Object[] objs = new Integer[] {1, 2};
        List<Object> boxed = Arrays.asList(objs);
        try { boxed.set(0, "s"); } catch (ArrayStoreException e) { sb.append(" ase"); }
        sb.append(xs.indexOf(null)).append(xs.contains(s)).append(xs.hashCode());
        return sb.toString();
    }

    static String sorting(int n, int k) {
        compares = 0;
        List<Integer> xs = numbers(n, k);
        Comparator<Integer> counting = (a, b) -> { compares++; return Integer.compare(a, b); };
        List<Integer> copy = new ArrayList<>(xs);
        Collections.sort(copy, counting);
        int first = compares;
        List<Integer> desc = new ArrayList<>(xs);
        desc.sort(Comparator.reverseOrder());
        List<Integer> natural = new LinkedList<>(xs);
        Collections.sort(natural);
        List<Integer> byKey = new ArrayList<>(xs);
        byKey.sort(Comparator.comparingInt((Integer x) -> x * x).thenComparing(Comparator.naturalOrder()));
        return copy + " " + first + " " + desc + " " + natural + " " + byKey;
    }

    static String sortingStrings(String a, String b) {
        List<String> xs = new ArrayList<>();
        xs.add(b == null ? "" : b);
        xs.add("m");
        xs.add(a == null ? "" : a);
        xs.add("c");
        Collections.sort(xs);
        List<Object> mixed = new ArrayList<>(List.of("x", 1));
        StringBuilder sb = new StringBuilder(xs.toString());
        try { Collections.sort((List) mixed); } catch (ClassCastException e) { sb.append(" cce"); }
        List<Object> withNull = new ArrayList<>();
        withNull.add("x");
        withNull.add(null);
        try { Collections.sort((List) withNull); } catch (NullPointerException e) { sb.append(" npe"); }
        return sb.toString();
    }

    static String iterators(int n) {
        List<Integer> xs = numbers(n, 3);
        StringBuilder sb = new StringBuilder();
        try {
            for (Integer x : xs) if (x == 1) xs.add(9);
            sb.append("no-cme");
        } catch (ConcurrentModificationException e) { sb.append("cme"); }
        Iterator<Integer> it = xs.iterator();
        try {
            it.remove();
        } catch (IllegalStateException e) { sb.append(" ise"); }
        while (it.hasNext()) if (it.next() < 0) it.remove();
        sb.append(' ').append(xs);
        try { it.next(); } catch (java.util.NoSuchElementException e) { sb.append(" nsee"); }
        try {
            xs.forEach(x -> { if (x == 2) xs.remove(0); });
            sb.append(" ok");
        } catch (ConcurrentModificationException e) { sb.append(" cme2"); }
        return sb.toString();
    }

    static String hashSet(String s) {
        HashSet<String> set = new HashSet<>();
        StringBuilder sb = new StringBuilder(set.toString()).append(set.size()).append(set.isEmpty());
        set.add(s);
        sb.append(set).append(set.size());
        for (String x : set) sb.append('<').append(x).append('>');
        return sb.toString();
    }

    static String functions(int n, String s) {
        Function<Integer, Integer> twice = x -> x * 2;
        Function<Integer, Integer> inc = x -> x + 1;
        Predicate<String> empty = String::isEmpty;
        Predicate<String> longer = x -> x.length() > 3;
        String t = s == null ? "" : s;
        return twice.andThen(inc).apply(n) + " " + twice.compose(inc).apply(n) + " " + empty.negate().test(t) + " "
                + empty.or(longer).test(t) + " " + empty.and(longer).test(t) + " " + Function.identity().apply(t);
    }

    static String streams(int n, String s) {
        List<String> words = new ArrayList<>(Arrays.asList("pear", "fig", s == null ? "null" : s, "kiwi"));
        int m = small(n);
        String joined = words.stream().map(w -> w.length() + w).collect(Collectors.joining(",", "[", "]"));
        int sum = IntStream.rangeClosed(1, m).filter(i -> i % 3 != 0).map(i -> i * i).sum();
        long red = IntStream.range(0, m).asLongStream().reduce(1L, (a, b) -> a * 3 + b);
        compares = 0;
        long counted = words.stream().map(w -> { compares++; return w; }).count();  // SIZED: map does not run
        long filtered = words.stream().filter(w -> w.length() > 3).count();
        StringBuilder sb = new StringBuilder();
        words.stream().forEach(w -> sb.append(w.length()));
        java.util.stream.Stream<String> st = words.stream();
        st.count();
        try { st.count(); } catch (IllegalStateException e) { sb.append(" ise"); }
        return joined + " " + sum + " " + red + " " + counted + "/" + compares + " " + filtered + " " + sb + " "
                + words.stream().collect(Collectors.joining("-"));
    }

    static String lines(String s) {
        String t = s == null ? "a\r\nb\rc\n\nd\n" : s + "\n" + s + "\r\n";
        StringBuilder sb = new StringBuilder();
        t.lines().forEach(x -> sb.append('[').append(x).append(']'));
        return sb.append(t.lines().count()).append("".lines().count()).toString();
    }
}
