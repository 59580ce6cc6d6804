"""The Java library's meaning: what the JDK's methods do, for the interpreter and for the rules.

What this package owns
    Every fact peggy-jvm relies on about the Java class library (JDK 17), as opposed to the JVM's instructions
    (:mod:`peggy_jvm.semantics`, :mod:`peggy_jvm.ir.interp`). Three kinds of facts, each in one place:

    * **Method identities and specified properties** that more than one stage reads: :mod:`.facts`
      (``STRING_LENGTH``, ``STRING_CONCAT``, ``OBJECT_EQUALS`` ...; which builder methods return their receiver,
      which cannot tell a builder's capacity, which classes the JVM initializes while it boots). The string rules
      (:mod:`peggy_jvm.rules.strings`) read them, and the models register under the same constants, so a search
      for ``STRING_CONCAT`` finds the fact, the model and the rules.
    * **Executable models** of library methods, for the IR interpreter and the PEG evaluator: one module per
      area, each registering into :data:`.registry.MODELS` (keyed by declaring class, name, descriptor):
      :mod:`.objects` (Object, Class, Enum, Objects, reflection), :mod:`.records` (``ObjectMethods``),
      :mod:`.strings` (String, Character, concatenation by ``invokedynamic``), :mod:`.builders`
      (StringBuilder/StringBuffer), :mod:`.numbers` (Integer/Long helpers, parsing, Math, boxing),
      :mod:`.floattext` (Double/Float to text exactly as JDK 17), :mod:`.throwable`, :mod:`.system`
      (System.out, arraycopy, Thread.holdsLock), :mod:`.arrays` (java.util.Arrays' text and equality),
      :mod:`.collections` (lists, a minimal HashSet, iterators, sorting), :mod:`.functions` (lambdas,
      Comparator, Function, Predicate), :mod:`.streams`. :mod:`.handler`'s ``DefaultCallHandler`` serves them
      to the interpreter, with the program's own classes interpreted by lifting.
    * **Rewrite axioms** of pure library methods: the axiom file ``peggy_jvm/axioms/java-lang.ax`` (group
      ``java.lang``: ``Math.abs/max/min``, ``Integer``/``Long`` helpers as pure operators), which stays an axiom
      file read by :mod:`peggy_jvm.rules`; ``tests/test_axioms_sound.py`` holds each of its right-hand sides to
      an independent model of the method.

Inputs / outputs
    No state of its own beyond the registry, filled at import. The models take the handler, the running
    :class:`~peggy_jvm.ir.interp.Interpreter`, the receiver (None for static methods) and the arguments, and
    return the result or raise :class:`~peggy_jvm.ir.interp.JavaThrow` / :class:`~peggy_jvm.ir.interp.Unsupported`.

Invariants
    * Above the IR in the layering: the package imports :mod:`peggy_jvm.ir` and :mod:`peggy_jvm.classfile`,
      and nothing below it imports the package, except :mod:`.facts`, which imports only the IR's node types so
      that the rules may read it without the interpreter.
    * A model is exact or raises Unsupported with the reason (threads, string identity, Unicode tables beyond
      ASCII, the platform charset, TimSort's merges ...): never a guess.
    * Names with a leading underscore are private to the package, not to one module: the area modules share
      helpers (``_non_null``, ``_str_arg`` ...) the way JDK code calls its own methods. Imports among them run
      one way: objects <- strings <- numbers <- (records, functions, arrays); functions <- collections <-
      streams; the handler imports every area.
    * This ``__init__`` imports nothing, so reading :mod:`.facts` does not load the models.
"""
