"""Fuzzing for streamnorm: mutation strategies, invariant checks, runners.

* :mod:`fuzz.mutate` — turns a recorded stream into hostile variants;
* :mod:`fuzz.check` — runs bytes through the normalizer and checks the
  contract's invariants;
* :mod:`fuzz.run` — seeded command-line runner (and reproducer);
* :mod:`fuzz.atheris_entry` — coverage-guided entry point for atheris.
"""
