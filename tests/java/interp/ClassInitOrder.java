// Purpose-written probes of class initialization order for tests/test_interp.py: the bytecode `new` initializes
// its class before the constructor's arguments are evaluated, so a static initializer's output must come before
// the output of the argument expressions (the lifter keeps a ClassInit statement where `new` was whenever
// something observable happens between `new` and the constructor call). Every method runs in a fresh class
// loader on the JVM and on a fresh heap in the interpreter, so each sees the initializers run.
public class ClassInitOrder {
    static class Loud {
        static int created;
        static { System.out.println("Loud.<clinit>"); }
        final int v;
        Loud(int v) { this.v = v; created++; System.out.println("Loud(" + v + ")"); }
    }

    static class Quiet {
        static final int K = 41;          // a ConstantValue: no initializer runs for it
        static int seen = init();
        static int init() { System.out.println("Quiet.<clinit>"); return 7; }
    }

    static class Failing {
        static int x = 1 / zero();
        static int zero() { return 0; }
    }

    static int arg(int v) {
        System.out.println("arg " + v);
        return v;
    }

    static int newWithCallArgument(int v) {
        return new Loud(arg(v)).v;
    }

    static int newWithBranchyArgument(int v) {
        return new Loud(v > 0 ? arg(v) : -v).v + Loud.created;
    }

    static int constantDoesNotInitialize(int v) {
        int k = Quiet.K;                  // inlined by javac
        System.out.println("before");
        return k + v + Quiet.seen;        // initializes here
    }

    static String failingInitializer(int v) {
        try {
            return "x=" + Failing.x;
        } catch (ExceptionInInitializerError e) {
            try {
                return "again " + Failing.x;
            } catch (NoClassDefFoundError e2) {
                return "eiie then ncdfe";
            }
        }
    }
}
