"""What the tests and the scripts in ``scripts/`` share: one copy of each mechanism both need.

The tests import these modules as ``support.<module>`` (pytest puts ``tests/`` on the import path, as for
``conftest``); the scripts as ``tests.support.<module>`` (each puts the repository root on the import path). No
test imports from ``scripts/``: a script is a command line over these modules and the package.

* ``fixture_build``: compiling ``fixtures/src`` into ``fixtures/classes/`` (``make fixtures``).
* ``workloads``: a Java workload (``tests/java/workloads/``) compiled against a jar, run, two runs compared.
* ``corpus``: the corpus jars (names, cache, fetch, workloads, dependencies), the class sample of a big jar, and
  the optimizer's table from a JSON report.
* ``proguard``: ProGuard's intra-method optimizations of a jar and ``validate`` of the pair.
* ``pairsuite``: issue 17's labelled pair suite (manifest, validation, judging, report).
* ``bench_harness``: the runtime benchmark's kernels and its JVM harness.
* ``extraction``: small extraction problems (random, hand-written) and their brute-force optimum.
* ``javac_cache``: the tests' Java compiles, each done once (class files cached under the temporary directory).
* ``same_code``: which methods of one fixture tree run exactly as in another (the slow sweeps run them once).
* ``cputime``: CPU seconds per test phase into ``$PEGGY_TEST_CPU_LOG`` (a pytest plugin ``conftest`` loads).

Nothing here is product code: the package ``peggy_jvm`` imports none of it.
"""
