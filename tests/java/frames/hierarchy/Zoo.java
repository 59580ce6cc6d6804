package zoo;

/**
 * A small class hierarchy for tests/test_hierarchy.py (compiled there with javac; never run):
 *
 * <pre>
 *   Object <- Animal <- Dog (implements Pet) <- Puppy
 *                    <- Cat (implements Pet, Loud)
 *   Object <- Robot (implements Loud)
 *   interface Pet; interface Loud extends Pet
 * </pre>
 */
public class Zoo {
}

interface Pet {
}

interface Loud extends Pet {
}

abstract class Animal {
}

class Dog extends Animal implements Pet {
}

class Puppy extends Dog {
}

class Cat extends Animal implements Pet, Loud {
}

class Robot implements Loud {
}
