import java.io.IOException;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;

/**
 * Purpose-written methods for tests/test_frames.py: each one makes javac emit a particular
 * StackMapTable frame kind, or makes the frame computer merge particular types. main() prints one
 * line per method so that a rewritten copy of the class can be compared with the original under
 * java -Xverify:all. Compiled by the tests with javac --release 17 and --release 8.
 */
public class FrameShapes {
    long wide;
    int counter;

    // ---------------------------------------------------------------- constructors

    FrameShapes() {
        this(true);
    }

    /** this(b ? 1 : 2): uninitializedThis in the locals and on the stack at the join frames. */
    FrameShapes(boolean b) {
        this(b ? 1 : 2, 5L, 1.5);
    }

    /** A constructor with long/double parameters and a branch after super(). */
    FrameShapes(int x, long y, double z) {
        super();
        if (x > 1) {
            wide = y + (long) z;
        } else {
            wide = y;
        }
        counter = x;
    }

    static final class Box {
        final int value;

        Box(int value) {
            this.value = value;
        }
    }

    // ---------------------------------------------------------------- frame kinds

    /** new Box(c ? k : 2): two uninitialized(offset of new) entries on the stack at the join. */
    static Box newWithTernary(boolean c) {
        int k = 7;
        return new Box(c ? k : 2);
    }

    /** APPEND (s, i) at the loop head, CHOP 1 (drops i) after the loop. */
    static int chopAfterLoop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    /** SAME_LOCALS_1_STACK_ITEM at the ternary join, APPEND, then FULL_FRAME (two ints on the stack). */
    static int fullFrame(boolean c) {
        int a = c ? 1 : 2;
        return a + (c ? 3 : 4);
    }

    /** SAME_FRAME_EXTENDED: the first frame comes more than 63 bytes into the code. */
    static int sameFrameExtended(int a) {
        if (a > 0) {
            a = (a + 1001) * (a + 1002) * (a + 1003) * (a + 1004) * (a + 1005) * (a + 1006)
                    * (a + 1007) * (a + 1008) * (a + 1009) * (a + 1010) * (a + 1011) * (a + 1012);
        }
        return a;
    }

    /** SAME_LOCALS_1_STACK_ITEM_EXTENDED: an int on the stack more than 63 bytes after the previous frame. */
    static int sameLocals1Extended(int a) {
        return a > 0 ? 5
                : (a + 1001) * (a + 1002) * (a + 1003) * (a + 1004) * (a + 1005) * (a + 1006)
                        * (a + 1007) * (a + 1008) * (a + 1009) * (a + 1010) * (a + 1011) * (a + 1012);
    }

    /** APPEND 2 (a, b) at the loop head, CHOP 2 after the block. */
    static int chopTwo(int n) {
        if (n > 0) {
            int a = n + 1, b = n * 2;
            while (a < b) {
                a += 3;
            }
            n = a;
        }
        return n;
    }

    /** APPEND 3 (a, b, c) at the loop head, CHOP 3 after the block. */
    static int chopThree(int n) {
        if (n > 0) {
            int a = n + 1, b = n * 2, c = n % 3;
            while (a < b) {
                a += c + 1;
            }
            n = a;
        }
        return n;
    }

    /** Long and double locals and parameters (two words each), in a static method. */
    static long longsAndDoubles(long x, double y, int n) {
        long s = x;
        for (int i = 0; i < n; i++) {
            s += (long) y + i;
        }
        double d = s;
        if (d > 10) {
            return (long) d;
        }
        return s;
    }

    /** The same in an instance method: `this` is local 0. */
    long instanceLongs(long x, double y) {
        long t = x;
        if (y > 2.0) {
            t += counter;
        }
        return t + wide;
    }

    // ---------------------------------------------------------------- handlers

    /** The handler sees `l` as ArrayList (before the range) and LinkedList (inside): AbstractList. */
    static int handlerMergesLocals(int n) {
        AbstractList<String> l = new ArrayList<>();
        try {
            l = new LinkedList<>();
            l.add("x");
            int t = 10 / n;
            String u = String.valueOf(t);
            l.add(u);
        } catch (RuntimeException e) {
            return -l.size();
        }
        return l.size();
    }

    static void mayThrow(int n) throws IOException {
        if (n == 1) {
            throw new IOException("io");
        }
        if (n == 2) {
            throw new IllegalStateException("state");
        }
        if (n == 3) {
            throw new IllegalArgumentException("arg");
        }
    }

    /** A multi-catch handler: two exception-table rows, one handler whose stack is the merge. */
    static String multiCatch(int n) {
        try {
            mayThrow(n);
            return "none";
        } catch (IllegalStateException | IllegalArgumentException e) {
            return "runtime " + e.getMessage();
        } catch (IOException e) {
            return "io " + e.getMessage();
        }
    }

    /** A finally block: a catch-any handler (java/lang/Throwable on the stack). */
    static int withFinally(int n) {
        int r = 0;
        try {
            r = 100 / n;
        } finally {
            r++;
        }
        return r;
    }

    // ---------------------------------------------------------------- reference merges

    static int mergeLists(boolean c) {
        Object o;
        if (c) {
            o = new ArrayList<String>();
        } else {
            o = new LinkedList<String>();
        }
        return o.hashCode() == 1 ? 0 : ((List<?>) o).size();
    }

    static int mergeCharSequences(boolean c) {
        CharSequence cs;
        if (c) {
            cs = "abc";
        } else {
            cs = new StringBuilder("de");
        }
        return cs.length();
    }

    static int mergeObjectArrays(boolean c) {
        Object[] a;
        if (c) {
            a = new String[1];
        } else {
            a = new Integer[2];
        }
        return a.length;
    }

    static int mergeListArrays(boolean c) {
        Object[] a;
        if (c) {
            a = new ArrayList<?>[3];
        } else {
            a = new LinkedList<?>[4];
        }
        return a.length;
    }

    static int mergePrimitiveArrays(boolean c) {
        Object a;
        if (c) {
            a = new int[5];
        } else {
            a = new long[6];
        }
        return a.getClass().getName().length();
    }

    static int mergeArraysOfArrays(boolean c) {
        Object[] a;
        if (c) {
            a = new int[7][];
        } else {
            a = new String[8][];
        }
        return a.length;
    }

    static int mergeNull(boolean c) {
        String s;
        if (c) {
            s = null;
        } else {
            s = "xyz";
        }
        return s == null ? -1 : s.length();
    }

    /** A loop-carried local: null on entry, a String after the first iteration. */
    static int loopCarried(int n) {
        Object s = null;
        for (int i = 0; i < n; i++) {
            if (s != null) {
                n--;
            }
            s = String.valueOf(i);
        }
        return s == null ? 0 : s.hashCode() & 0xff;
    }

    // ---------------------------------------------------------------- driver

    public static void main(String[] args) {
        System.out.println(new FrameShapes().wide + " " + new FrameShapes(false).counter);
        System.out.println(new FrameShapes(3, 4L, 2.5).wide);
        System.out.println(newWithTernary(true).value + " " + newWithTernary(false).value);
        System.out.println(chopAfterLoop(10));
        System.out.println(chopTwo(5) + " " + chopTwo(-5) + " " + chopThree(7) + " " + chopThree(-7));
        System.out.println(fullFrame(true) + " " + fullFrame(false));
        System.out.println(sameFrameExtended(2) + " " + sameFrameExtended(-2));
        System.out.println(sameLocals1Extended(2) + " " + sameLocals1Extended(-2));
        System.out.println(longsAndDoubles(3L, 2.5, 4) + " " + longsAndDoubles(1L, 0.5, 2));
        System.out.println(new FrameShapes(2, 1L, 1.0).instanceLongs(5L, 3.0));
        System.out.println(handlerMergesLocals(2) + " " + handlerMergesLocals(0));
        for (int i = 0; i < 4; i++) {
            System.out.println(multiCatch(i));
        }
        System.out.println(withFinally(7));
        try {
            withFinally(0);
        } catch (ArithmeticException e) {
            System.out.println("finally rethrew " + e.getMessage());
        }
        System.out.println(mergeLists(true) + " " + mergeLists(false));
        System.out.println(mergeCharSequences(true) + " " + mergeCharSequences(false));
        System.out.println(mergeObjectArrays(true) + " " + mergeObjectArrays(false));
        System.out.println(mergeListArrays(true) + " " + mergeListArrays(false));
        System.out.println(mergePrimitiveArrays(true) + " " + mergePrimitiveArrays(false));
        System.out.println(mergeArraysOfArrays(true) + " " + mergeArraysOfArrays(false));
        System.out.println(mergeNull(true) + " " + mergeNull(false));
        System.out.println(loopCarried(0) + " " + loopCarried(5));
    }
}
