/** Module doc: what the skimming lexer must read right. */
package tricky;

/** Doc of Tricky. */
public class Tricky {
    static final String BRACE = "}";
    private final char open = '{';

    /** Doc of run. */
    public void run() throws Exception {
        Runnable r = () -> { System.out.println("{" + BRACE); };
        r.run();
    }

    enum Color {
        RED { int v() { return 1; } },
        GREEN { int v() { return 2; } };
        abstract int v();
    }

    interface Shape {
        double area();
    }

    record Point(int x, int y) {
        Point {
            if (x < 0) { throw new IllegalArgumentException("}"); }
        }
    }
}
