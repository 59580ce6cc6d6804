/**
 * A method whose only operand-stack use is the exception pushed on entry to its handler, which the
 * handler stores at once: max_stack must still be 1 (javac says 1, and HotSpot needs room for it).
 */
public class HandlerOnly {
    static int calls;

    static void work() {
        calls++;
        if (calls % 2 == 1) {
            throw new IllegalStateException("odd");
        }
    }

    static void swallow() {
        try {
            work();
        } catch (RuntimeException e) {
        }
    }

    public static void main(String[] args) {
        swallow();
        swallow();
        swallow();
        System.out.println("calls " + calls);
    }
}
