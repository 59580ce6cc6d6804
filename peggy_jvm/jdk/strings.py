"""Models of ``java.lang.String``, ``Character`` and string concatenation by ``invokedynamic``.

What this module owns
    String's methods (the common ones, Java 11's strip/isBlank/lines' splitting, ``split`` by simple regexes,
    ``join``, the constructors through :func:`_new_string`, ``valueOf``), ``Character``'s ASCII predicates and
    case, ``Locale.ROOT`` case mapping, and :func:`concat_indy` (``StringConcatFactory``'s recipes). Helpers the
    other text areas share: :func:`_str_arg`, :func:`_char_seq`, :func:`_printable`, :func:`_sioobe`.

Inputs / outputs
    Models registered into :data:`~peggy_jvm.jdk.registry.MODELS` at import; a String is a Python ``str`` of
    UTF-16 code units.

Invariants
    Unicode tables beyond ASCII are never guessed (Java's and Python's differ in version): Unsupported.
    The methods rules rely on are registered under :mod:`.facts`' references (``STRING_LENGTH``,
    ``STRING_CONCAT``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NoReturn, cast

from .. import semantics as S
from ..classfile.descriptors import parse_method_descriptor
from ..ir.interp import (MAX_ARRAY_ELEMENTS, NPE, Interpreter, JArray, JObject, Unsupported, Value,
                         runtime_class)
from ..ir.nodes import FieldRef, InvokeDynamic
from .facts import STRING, STRING_CONCAT, STRING_LENGTH
from .floattext import double_to_string, float_to_string
from .objects import _non_null
from .registry import MODELS, Model, implements, model

if TYPE_CHECKING:
    from .handler import DefaultCallHandler


# -- helpers the text areas share ------------------------------------------------------------------------
def _str_arg(interp: Interpreter, v: Value) -> str:
    if v is None:
        interp.throw(NPE)
    if type(v) is not str:
        raise Unsupported(f"a {runtime_class(v)} where a String is expected")
    return v


def _char_seq(h: DefaultCallHandler, interp: Interpreter, v: Value) -> str:
    """The text of a CharSequence argument (String or StringBuilder); NPE on null."""
    if v is None:
        interp.throw(NPE)
    if type(v) is str:
        return v
    if type(v) is JObject and "sb" in v.native:
        return "".join(v.native["sb"])
    raise Unsupported(f"CharSequence of class {runtime_class(v)}")


def _printable(text: str) -> str:
    """What a UTF-8 PrintStream writes for ``text``: an unpaired surrogate becomes '?'."""
    return text if text.isascii() else _replace_lone_surrogates(text)


def _replace_lone_surrogates(text: str) -> str:
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        o = ord(c)
        if 0xD800 <= o <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            out.append(c + text[i + 1])
            i += 2
            continue
        out.append("?" if 0xD800 <= o <= 0xDFFF else c)
        i += 1
    return "".join(out)


def _sioobe(interp: Interpreter) -> NoReturn:
    interp.throw("java/lang/StringIndexOutOfBoundsException")


def _ascii_only(s: str, what: str) -> None:
    if not s.isascii():
        raise Unsupported(f"{what} of non-ASCII text (Unicode tables not modelled)")


def _java_hash(s: str) -> int:
    h = 0
    for c in s:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return S.wrap_i(h)


def _utf16(code_point: int) -> str:
    if code_point < 0x10000:
        return chr(code_point)
    o = code_point - 0x10000
    return chr(0xD800 + (o >> 10)) + chr(0xDC00 + (o & 0x3FF))


# java.lang.String
@implements(STRING_LENGTH)
def _s_length(h, interp, s, args):
    return len(s)


@model(STRING, "isEmpty", "()Z")
def _s_is_empty(h, interp, s, args):
    return int(not s)


@model(STRING, "charAt", "(I)C")
def _s_char_at(h, interp, s, args):
    i = args[0]
    if not 0 <= i < len(s):
        _sioobe(interp)
    return ord(s[i])


@model(STRING, "equals", "(Ljava/lang/Object;)Z")
def _s_equals(h, interp, s, args):
    return int(type(args[0]) is str and args[0] == s)


@model(STRING, "hashCode", "()I")
def _s_hash(h, interp, s, args):
    return _java_hash(s)


@model(STRING, "toString", "()Ljava/lang/String;")
@model(STRING, "intern", "()Ljava/lang/String;")
def _s_self(h, interp, s, args):
    return s


@implements(STRING_CONCAT)
def _s_concat(h, interp, s, args):
    return s + _str_arg(interp, args[0])


@model(STRING, "substring", "(I)Ljava/lang/String;", "(II)Ljava/lang/String;")
def _s_substring(h, interp, s, args):
    begin = args[0]
    end = args[1] if len(args) > 1 else len(s)
    if begin < 0 or end > len(s) or begin > end:
        _sioobe(interp)
    return s[begin:end]


@model(STRING, "indexOf", "(I)I", "(II)I")
def _s_index_of_char(h, interp, s, args):
    start = max(args[1], 0) if len(args) > 1 else 0
    if start >= len(s) or not 0 <= args[0] <= 0x10FFFF:
        return -1
    return s.find(_utf16(args[0]), start)


@model(STRING, "lastIndexOf", "(I)I")
def _s_last_index_of_char(h, interp, s, args):
    if not 0 <= args[0] <= 0x10FFFF:
        return -1
    return s.rfind(_utf16(args[0]))


@model(STRING, "indexOf", "(Ljava/lang/String;)I", "(Ljava/lang/String;I)I")
def _s_index_of(h, interp, s, args):
    sub = _str_arg(interp, args[0])
    start = args[1] if len(args) > 1 else 0
    start = min(max(start, 0), len(s))
    return s.find(sub, start)


@model(STRING, "lastIndexOf", "(Ljava/lang/String;)I")
def _s_last_index_of(h, interp, s, args):
    return s.rfind(_str_arg(interp, args[0]))


@model(STRING, "startsWith", "(Ljava/lang/String;)Z")
def _s_starts_with(h, interp, s, args):
    return int(s.startswith(_str_arg(interp, args[0])))


@model(STRING, "endsWith", "(Ljava/lang/String;)Z")
def _s_ends_with(h, interp, s, args):
    return int(s.endswith(_str_arg(interp, args[0])))


@model(STRING, "contains", "(Ljava/lang/CharSequence;)Z")
def _s_contains(h, interp, s, args):
    return int(_char_seq(h, interp, args[0]) in s)


@model(STRING, "compareTo", "(Ljava/lang/String;)I")
def _s_compare_to(h, interp, s, args):
    t = _str_arg(interp, args[0])
    for a, b in zip(s, t):
        if a != b:
            return ord(a) - ord(b)
    return len(s) - len(t)


@model(STRING, "toCharArray", "()[C")
def _s_to_char_array(h, interp, s, args):
    return JArray("[C", [ord(c) for c in s])


@model(STRING, "replace", "(CC)Ljava/lang/String;")
def _s_replace_char(h, interp, s, args):
    return s.replace(chr(args[0]), chr(args[1]))


@model(STRING, "replace", "(Ljava/lang/CharSequence;Ljava/lang/CharSequence;)Ljava/lang/String;")
def _s_replace(h, interp, s, args):
    target = _char_seq(h, interp, args[0])
    replacement = _char_seq(h, interp, args[1])
    return s.replace(target, replacement)  # Python and Java agree, also for an empty target


@model(STRING, "trim", "()Ljava/lang/String;")
def _s_trim(h, interp, s, args):
    i, j = 0, len(s)
    while i < j and s[i] <= " ":
        i += 1
    while j > i and s[j - 1] <= " ":
        j -= 1
    return s[i:j]


@model(STRING, "repeat", "(I)Ljava/lang/String;")
def _s_repeat(h, interp, s, args):
    if args[0] < 0:
        interp.throw("java/lang/IllegalArgumentException")
    if len(s) * args[0] > MAX_ARRAY_ELEMENTS:
        raise Unsupported("string too long")
    return s * args[0]


@model(STRING, "toUpperCase", "()Ljava/lang/String;")
def _s_upper(h, interp, s, args):
    _ascii_only(s, "toUpperCase")
    return s.upper()


@model(STRING, "toLowerCase", "()Ljava/lang/String;")
def _s_lower(h, interp, s, args):
    _ascii_only(s, "toLowerCase")
    return s.lower()


@model(STRING, "equalsIgnoreCase", "(Ljava/lang/String;)Z")
def _s_equals_ignore_case(h, interp, s, args):
    t = args[0]
    if type(t) is not str:
        return 0
    _ascii_only(s + t, "equalsIgnoreCase")
    return int(s.lower() == t.lower())


@model(STRING, "valueOf", "(I)Ljava/lang/String;", "(J)Ljava/lang/String;")
def _s_value_of_int(h, interp, recv, args):
    return str(args[0])


@model(STRING, "valueOf", "(F)Ljava/lang/String;")
def _s_value_of_float(h, interp, recv, args):
    return float_to_string(args[0])


@model(STRING, "valueOf", "(D)Ljava/lang/String;")
def _s_value_of_double(h, interp, recv, args):
    return double_to_string(args[0])


@model(STRING, "valueOf", "(C)Ljava/lang/String;")
def _s_value_of_char(h, interp, recv, args):
    return chr(args[0])


@model(STRING, "valueOf", "(Z)Ljava/lang/String;")
def _s_value_of_bool(h, interp, recv, args):
    return "true" if args[0] else "false"


@model(STRING, "valueOf", "(Ljava/lang/Object;)Ljava/lang/String;")
def _s_value_of_object(h, interp, recv, args):
    return h.to_java_string(interp, args[0], "Ljava/lang/Object;")


@model(STRING, "valueOf", "([C)Ljava/lang/String;")
def _s_value_of_chars(h, interp, recv, args):
    if args[0] is None:
        interp.throw(NPE)
    return "".join(map(chr, args[0].items))


# Character (ASCII only: Java's and Python's Unicode tables differ in version)
def _char_pred(pred: Callable[[str], bool]) -> Model:
    def test(h, interp, recv, args):
        if not 0 <= args[0] < 128:
            raise Unsupported("Character class of a non-ASCII char")
        return int(pred(chr(args[0])))
    return test


for _name, _pred in (("isDigit", str.isdigit), ("isLetter", str.isalpha), ("isLetterOrDigit", str.isalnum),
                     ("isUpperCase", str.isupper), ("isLowerCase", str.islower),
                     ("isAlphabetic", str.isalpha)):
    for _d in ("(C)Z", "(I)Z"):  # the char and the code point forms (isAlphabetic has only the latter)
        MODELS[("java/lang/Character", _name, _d)] = _char_pred(_pred)


def _char_case(upper: bool) -> Model:
    def conv(h, interp, recv, args):
        if not 0 <= args[0] < 128:
            raise Unsupported("case of a non-ASCII char")
        c = chr(args[0])
        return ord(c.upper() if upper else c.lower())
    return conv


def _numeric_value(h, interp, recv, args):
    c = args[0]
    if not 0 <= c < 128:
        raise Unsupported("numeric value of a non-ASCII char")
    ch = chr(c)
    if ch.isdigit():
        return c - 48
    if ch.isalpha():
        return ord(ch.lower()) - ord("a") + 10
    return -1


MODELS[("java/lang/Character", "getNumericValue", "(C)I")] = _numeric_value
for _d in ("(C)C", "(I)I"):
    MODELS[("java/lang/Character", "toUpperCase", _d)] = _char_case(True)
    MODELS[("java/lang/Character", "toLowerCase", _d)] = _char_case(False)


# -- more of String: constructors, Java 11 methods, split, Locale.ROOT; Character.isWhitespace ----------------------
def _new_string(h: DefaultCallHandler, interp: Interpreter, desc: str, args: list[Value]) -> str:
    """``new String(...)``: its text (a new object in Java; identity of equal strings is not modelled anyway)."""
    if desc == "()V":
        return ""
    if desc in ("(Ljava/lang/String;)V", "(Ljava/lang/StringBuilder;)V", "(Ljava/lang/StringBuffer;)V"):
        return _char_seq(h, interp, args[0])
    if desc in ("([C)V", "([CII)V"):
        arr = cast("JArray | None", args[0])  # by the descriptor
        if arr is None:
            interp.throw(NPE)
        items = arr.items
        off, count = (cast(int, args[1]), cast(int, args[2])) if len(args) == 3 else (0, len(items))
        if off < 0 or count < 0 or off > len(items) - count:
            _sioobe(interp)
        return "".join(map(chr, items[off:off + count]))
    if desc == "([B)V":
        arr = cast("JArray | None", args[0])  # by the descriptor
        if arr is None:
            interp.throw(NPE)
        if any(b < 0 for b in arr.items):
            raise Unsupported("new String(byte[]) of non-ASCII bytes (the default charset is the platform's)")
        return "".join(map(chr, arr.items))
    raise Unsupported(f"new String{desc}")


_JAVA_WHITESPACE = frozenset("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                             "\u2008\u2009\u200a\u2028\u2029\u205f\u3000")
"""``Character.isWhitespace``: space, line and paragraph separators except the no-break ones (U+00A0, U+2007,
U+202F), and the ASCII controls 9-13 and 28-31 (unchanged in Unicode for decades, so exact for every char)."""


@model("java/lang/Character", "isWhitespace", "(C)Z", "(I)Z")
def _char_is_whitespace(h, interp, recv, args):
    c = args[0]
    return int(0 <= c < 0x10000 and chr(c) in _JAVA_WHITESPACE)


@model(STRING, "isBlank", "()Z")
def _s_is_blank(h, interp, s, args):
    return int(all(c in _JAVA_WHITESPACE for c in s))  # a surrogate is never whitespace


def _strip_left(s: str) -> int:
    i = 0
    while i < len(s) and s[i] in _JAVA_WHITESPACE:
        i += 1
    return i


def _strip_right(s: str, i: int) -> int:
    j = len(s)
    while j > i and s[j - 1] in _JAVA_WHITESPACE:
        j -= 1
    return j


def _strip(s: Value, leading: bool, trailing: bool) -> str:
    text = cast(str, s)  # the receiver of a String method
    i = _strip_left(text) if leading else 0
    return text[i:_strip_right(text, i) if trailing else len(text)]


MODELS[(STRING, "strip", "()Ljava/lang/String;")] = lambda h, i, s, a: _strip(s, True, True)
MODELS[(STRING, "stripLeading", "()Ljava/lang/String;")] = lambda h, i, s, a: _strip(s, True, False)
MODELS[(STRING, "stripTrailing", "()Ljava/lang/String;")] = lambda h, i, s, a: _strip(s, False, True)


@model(STRING, "subSequence", "(II)Ljava/lang/CharSequence;")
def _s_sub_sequence(h, interp, s, args):
    return _s_substring(h, interp, s, args)


@model(STRING, "compareTo", "(Ljava/lang/Object;)I")  # the bridge: checkcast String first
def _s_compare_to_object(h, interp, s, args):
    if args[0] is not None and type(args[0]) is not str:
        interp.throw("java/lang/ClassCastException")
    return _s_compare_to(h, interp, s, args)


@model(STRING, "getBytes", "()[B")
def _s_get_bytes(h, interp, s, args):
    _ascii_only(s, "getBytes() (the default charset is the platform's)")
    return JArray("[B", [ord(c) for c in s])


@model(STRING, "join", "(Ljava/lang/CharSequence;[Ljava/lang/CharSequence;)Ljava/lang/String;")
def _s_join(h, interp, recv, args):
    delim = h.to_java_string(interp, _non_null(interp, args[0]), "Ljava/lang/Object;")
    items = cast(JArray, _non_null(interp, args[1])).items  # a CharSequence[] by the descriptor
    return delim.join(h.to_java_string(interp, e, "Ljava/lang/Object;") for e in items)


_REGEX_META = ".$|()[{^?*+\\"


def _simple_regex(regex: str) -> str | None:
    """A Python pattern that matches exactly what Java's ``regex`` matches, for a small sublanguage that cannot
    match the empty string: atoms (a literal char other than a metacharacter, ``\\`` + a non-alphanumeric ASCII
    char, or a class ``[...]`` of such literals and ranges, not negated) each optionally followed by ``+``; its
    chars are all below the surrogates. None for anything else."""
    out = []
    i, n = 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "[":
            j = regex.find("]", i + 1)
            cls = _simple_class(regex[i + 1:j]) if j > i + 1 else None
            if cls is None:
                return None
            out.append(cls)
            i = j + 1
        elif c == "\\":
            if i + 1 >= n or regex[i + 1].isalnum() or not regex[i + 1].isascii():
                return None
            out.append("\\" + regex[i + 1])
            i += 2
        elif c in _REGEX_META or ord(c) >= 0xD800:
            return None
        else:
            out.append("\\" + c if not c.isalnum() else c)
            i += 1
        if i < n and regex[i] == "+":
            out.append("+")
            i += 1
    return "".join(out) if out else None


def _simple_class(body: str) -> str | None:
    """A Python class for the body of a Java class ``[...]`` made of printable ASCII literals (no ``^`` first, no
    ``[``, ``]``, ``\\``, ``&`` or ``-`` of its own) and ranges ``x-y`` of letters or digits, or None."""
    if not body or body[0] == "^" or not body.isascii() or any(ch in "[]\\&" or ch < " " for ch in body):
        return None
    parts, k = [], 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            lo, hi = body[k], body[k + 2]
            if not (lo.isalnum() and hi.isalnum() and lo <= hi):
                return None
            parts.append(f"{lo}-{hi}")
            k += 3
        elif body[k] == "-":
            return None
        else:
            parts.append(body[k] if body[k].isalnum() else "\\" + body[k])
            k += 1
    return "[" + "".join(parts) + "]"


@model(STRING, "split", "(Ljava/lang/String;)[Ljava/lang/String;")
def _s_split(h, interp, s, args):
    """``split(regex)`` (limit 0): text between matches, a leading empty part kept, trailing empty parts
    dropped, the string itself if nothing matches. Only regexes of :func:`_simple_regex`'s sublanguage."""
    import re

    regex = _str_arg(interp, args[0])
    pattern = _simple_regex(regex)
    if pattern is None:
        raise Unsupported(f"split by regex {regex!r} (only simple character-class regexes are modelled)")
    parts, index = [], 0
    for m in re.finditer(pattern, s):
        parts.append(s[index:m.start()])
        index = m.end()
    if index == 0 and not parts:
        return JArray("[Ljava/lang/String;", [s])
    parts.append(s[index:])
    while parts and parts[-1] == "":
        parts.pop()
    return JArray("[Ljava/lang/String;", parts)


_LOCALE_ROOT = FieldRef("java/util/Locale", "ROOT", "Ljava/util/Locale;")


def _root_locale_case(upper: bool) -> Model:
    def conv(h, interp, s, args):
        loc = args[0]
        if loc is None:
            interp.throw(NPE)
        if type(loc) is not JObject or loc.native.get("locale") != "root":
            raise Unsupported("case conversion in a locale other than Locale.ROOT")
        _ascii_only(s, "toUpperCase" if upper else "toLowerCase")
        return s.upper() if upper else s.lower()
    return conv


MODELS[(STRING, "toUpperCase", "(Ljava/util/Locale;)Ljava/lang/String;")] = _root_locale_case(True)
MODELS[(STRING, "toLowerCase", "(Ljava/util/Locale;)Ljava/lang/String;")] = _root_locale_case(False)


# string concatenation by invokedynamic (StringConcatFactory)
def concat_indy(h: DefaultCallHandler, interp: Interpreter, stmt: InvokeDynamic, bsm: str, args: list[Value]) -> str:
    """A ``StringConcatFactory.<bsm>`` call site run on ``args``: the recipe's text with each argument rendered as
    ``String.valueOf`` renders its static type."""
    arg_descs = parse_method_descriptor(stmt.descriptor)[0]
    if bsm == "makeConcatWithConstants":
        recipe = stmt.bootstrap.arguments[0].value
        constants = [c.value for c in stmt.bootstrap.arguments[1:]]
    elif bsm == "makeConcat":
        recipe, constants = "\1" * len(args), []
    else:
        raise Unsupported(f"invokedynamic via StringConcatFactory.{bsm}")
    parts = []
    ai = ci = 0
    for ch in cast(str, recipe):  # makeConcatWithConstants: the recipe is a String constant
        if ch == "\1":
            parts.append(h.to_java_string(interp, args[ai], arg_descs[ai]))
            ai += 1
        elif ch == "\2":
            c = constants[ci]
            ci += 1
            if not isinstance(c, str):
                raise Unsupported("non-string constant in a concatenation recipe")
            parts.append(c)
        else:
            parts.append(ch)
    return "".join(parts)
