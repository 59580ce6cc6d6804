import org.jsoup.Jsoup;
import org.jsoup.nodes.Comment;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.jsoup.nodes.Entities;
import org.jsoup.nodes.Node;
import org.jsoup.nodes.TextNode;
import org.jsoup.parser.Parser;
import org.jsoup.safety.Safelist;
import org.jsoup.select.Elements;
import org.jsoup.select.NodeVisitor;
import org.jsoup.select.Selector;

import java.util.Locale;

/**
 * A deterministic workload over jsoup (written against 1.15).
 *
 * <p>Parses a handful of embedded HTML documents, some deliberately malformed (unclosed and
 * misnested tags, stray end tags, broken attributes, unterminated comments, a table in the wrong
 * place), and many tag-soup documents generated from a seeded linear congruential generator. Each
 * is queried with CSS selectors, walked with a node visitor, printed with text(), html() and
 * outerHtml(), cleaned with several Safelists and re-parsed as XML. A sample of the results is
 * printed, all of them are folded into a checksum printed at the end.
 *
 * <pre>
 *   java -cp jsoup.jar:CLASSES JsoupWork [ROUNDS]
 * </pre>
 */
public final class JsoupWork {
    private static long seed = 0x5DEECE66DL;
    private static long checksum = 0xcbf29ce484222325L;
    private static int lines;

    private static final String[] DOCS = {
        "<!DOCTYPE html><html><head><title>Catalogue &amp; prices</title>"
            + "<meta charset=utf-8><style>p{color:red}</style></head><body>"
            + "<div id=main class='box wide'><h1>Items</h1>"
            + "<ul><li class=item data-price=3>Apple <b>red</b></li><li class=item data-price=12>Melon</li>"
            + "<li class='item sale' data-price=7>Pear &lt;green&gt;</li></ul>"
            + "<p>See <a href='/terms'>terms</a> and <a href='http://example.com/x?a=1&amp;b=2'>more</a>.</p>"
            + "<table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>one</td></tr><tr><td>2</td><td>two</td></tr>"
            + "</table><img src=logo.png alt='Logo'><script>var x = '<b>not a tag</b>';</script>"
            + "</div><!-- a comment --><footer>&copy; 2024 &mdash; done</footer></body></html>",
        // unclosed and misnested tags, a stray end tag, attributes without quotes or values
        "<p>First <b>bold <i>both</b> italic</i> after<p>Second paragraph<div>block in p"
            + "</span><ul><li>one<li>two<li>three</ul><input type=checkbox checked disabled>"
            + "<a href=javascript:alert(1) onclick=evil()>click</a><font color=red size=+1>old</font>",
        // a table with content in the wrong places, a form, nested lists, entities without semicolons
        "<table><caption>Cap</caption>text before rows<tr><td>a<td>b<tr><td colspan=2>c</table>"
            + "<form action=/post method=post><select name=s><option value=1 selected>One<option>Two"
            + "</select><textarea>  raw <b>text</b> </textarea></form><ol start=3><li>x<ol><li>y</ol></ol>"
            + "&amp &lt &gt &quot &nbsp;&#65;&#x42;&unknown; &frac12 AT&T",
        // unterminated comment and attribute, unknown tags, a fragment with only text
        "<custom-tag foo=\"bar\">custom <x-y>nested</x-y></custom-tag><div title=\"unterminated>"
            + "<p class=a>text</p></div><!-- never closed <p>hidden</p>",
        "plain text, no tags at all & a stray ampersand < and a less-than",
        "<svg width=10 height=10><circle cx=5 cy=5 r=4 /></svg><math><mi>x</mi></math>"
            + "<noscript><p>no script</p></noscript><template><td>cell</td></template>"
            + "<pre>\n  keep   spaces\n</pre><br/><hr><p dir=rtl lang=ar>\u0645\u0631\u062d\u0628\u0627</p>",
    };

    private static final String[] QUERIES = {
        "li.item", "li[data-price]", "a[href^=http]", "a[href]", "p > b", "div#main h1", "td:eq(1)",
        "tr:has(td)", "li:contains(pear)", "*:matchesOwn(\\d+)", "ul li:nth-child(2n+1)", ":root", "b, i",
        "[class~=sale]", "p:not(.a)", "body > *", "li:last-child", "option[selected]", "img[src$=.png]", "x-y",
    };

    private static final String[] TAGS = {"p", "div", "span", "b", "i", "a", "ul", "li", "table", "tr", "td",
        "em", "h2", "section", "code", "pre", "blockquote", "img", "br", "script"};
    private static final String[] WORDS = {"alpha", "beta", "gamma", "&amp;", "&lt;x&gt;", "42", "\u00e9t\u00e9",
        "  ", "<", "&", "\"q\"", "delta"};

    private JsoupWork() {}

    private static int nextInt(int bound) {
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        return (int) ((seed >>> 33) % bound);
    }

    private static void mix(long v) {
        for (int i = 0; i < 8; i++) {
            checksum ^= (v >>> (8 * i)) & 0xff;
            checksum *= 0x100000001b3L;
        }
    }

    private static void mix(String s) {
        mix(s.length());
        for (int i = 0; i < s.length(); i++) {
            mix((long) s.charAt(i));
        }
    }

    /** Printable ASCII form of s, shortened to max characters. */
    private static String q(String s, int max) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length() && i < max; i++) {
            char c = s.charAt(i);
            if (c == '\n') {
                sb.append("\\n");
            } else if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        if (s.length() > max) {
            sb.append("...");
        }
        return sb.append('"').toString();
    }

    private static void out(String s) {
        System.out.println(s);
        lines++;
        mix(s);
    }

    /** A tag soup document: random tags, random attributes, random closing (or not). */
    private static String generate(int size) {
        StringBuilder sb = new StringBuilder();
        int open = 0;
        for (int i = 0; i < size; i++) {
            int r = nextInt(10);
            if (r < 4) {
                String tag = TAGS[nextInt(TAGS.length)];
                sb.append('<').append(tag);
                if (nextInt(3) == 0) {
                    sb.append(" class=c").append(nextInt(4));
                }
                if (nextInt(4) == 0) {
                    sb.append(" id='i").append(nextInt(50)).append('\'');
                }
                if (nextInt(5) == 0) {
                    sb.append(" href=\"").append(nextInt(2) == 0 ? "http://h/" : "javascript:").append(i)
                            .append('"');
                }
                if (nextInt(6) == 0) {
                    sb.append(" onclick=f(").append(i).append(')');
                }
                sb.append(nextInt(8) == 0 ? "/>" : ">");
                open++;
            } else if (r < 6 && open > 0) {
                sb.append("</").append(TAGS[nextInt(TAGS.length)]).append('>');
                open--;
            } else if (r == 6) {
                sb.append("<!--c").append(i).append("-->");
            } else {
                sb.append(WORDS[nextInt(WORDS.length)]).append(' ');
            }
        }
        return sb.toString();
    }

    private static String structure(Node root) {
        StringBuilder sb = new StringBuilder();
        int[] counts = new int[4];
        root.traverse(new NodeVisitor() {
            @Override
            public void head(Node node, int depth) {
                if (node instanceof Element) {
                    counts[0]++;
                    counts[3] = Math.max(counts[3], depth);
                } else if (node instanceof TextNode) {
                    counts[1]++;
                } else if (node instanceof Comment) {
                    counts[2]++;
                }
            }

            @Override
            public void tail(Node node, int depth) {
                if (node instanceof Element && ((Element) node).childNodeSize() == 0) {
                    sb.append(((Element) node).tagName().charAt(0));
                }
            }
        });
        return "elements=" + counts[0] + " texts=" + counts[1] + " comments=" + counts[2] + " depth=" + counts[3]
                + " leaves=" + sb;
    }

    private static void process(String name, String html, boolean show) {
        Document doc = Jsoup.parse(html, "http://example.org/base/");
        String text = doc.text();
        String body = doc.body().html();
        String outer = doc.outerHtml();
        String title = doc.title();
        String shape = structure(doc);
        mix(text);
        mix(body);
        mix(outer);
        mix(title);
        mix(shape);
        if (show) {
            out("doc " + name + " title=" + q(title, 40) + " " + shape);
            out("  text=" + q(text, 160));
            out("  body=" + q(body, 200));
        }
        StringBuilder hits = new StringBuilder();
        for (String query : QUERIES) {
            Elements found;
            try {
                found = doc.select(query);
            } catch (Selector.SelectorParseException e) {
                hits.append(query).append("=!").append(' ');
                mix("bad " + query);
                continue;
            }
            String joined = found.text() + "|" + found.eachAttr("href") + "|" + found.outerHtml().length();
            mix(joined);
            hits.append(found.size()).append(' ');
            for (Element e : found) {
                try {
                    mix(e.cssSelector());
                } catch (Selector.SelectorParseException ex) {
                    // jsoup 1.15 cannot always re-parse the selector it built (e.g. for class="c1/")
                    mix("cssSelector failed: " + ex.getMessage());
                }
                mix(e.absUrl("href"));
                mix(e.ownText());
                mix(e.siblingIndex());
            }
            if (show && !found.isEmpty()) {
                out("  " + query + " -> " + found.size() + " " + q(found.first().outerHtml(), 80) + " text="
                        + q(found.text(), 60) + (found.hasAttr("href") ? " abs=" + q(found.first().absUrl("href"), 50)
                        : ""));
            }
        }
        Safelist[] safelists = {Safelist.none(), Safelist.simpleText(), Safelist.basic(),
            Safelist.basicWithImages(), Safelist.relaxed().addAttributes(":all", "class")};
        for (int i = 0; i < safelists.length; i++) {
            String cleaned = Jsoup.clean(html, "http://example.org/", safelists[i]);
            boolean valid = Jsoup.isValid(html, safelists[i]);
            mix(cleaned);
            mix(valid ? 1 : 0);
            if (show) {
                out("  clean[" + i + "] valid=" + valid + " " + q(cleaned, 160));
            }
        }
        Document.OutputSettings settings = new Document.OutputSettings().prettyPrint(false)
                .escapeMode(Entities.EscapeMode.xhtml).charset("US-ASCII");
        doc.outputSettings(settings);
        String compact = doc.body().outerHtml();
        mix(compact);
        Document xml = Jsoup.parse(html, "", Parser.xmlParser());
        String xmlOut = xml.outerHtml();
        mix(xmlOut);
        Element added = doc.body().appendElement("div").attr("id", "added").text("added & <escaped>");
        added.prepend("<em>pre</em>").addClass("x").toggleClass("y");
        mix(doc.body().children().last().outerHtml());
        String unescaped = Parser.unescapeEntities(text, false);
        mix(Entities.escape(unescaped));
        if (show) {
            out("  compact=" + q(compact, 160));
            out("  xml=" + q(xmlOut, 160));
            out("  hits=" + hits.toString().trim() + " added=" + q(added.outerHtml(), 80));
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 80;
        for (int i = 0; i < DOCS.length; i++) {
            process("fixed" + i, DOCS[i], true);
        }
        for (int k = 0; k < rounds; k++) {
            process("gen" + k, generate(20 + k % 150), k % 20 == 0);
        }
        // Fragments and the body parser.
        Document fragment = Jsoup.parseBodyFragment("<td>cell</td><p>para<script>x</script>");
        out("fragment=" + q(fragment.body().html(), 120));
        out("lines=" + (lines + 1) + " checksum=" + Long.toHexString(checksum));
    }
}
