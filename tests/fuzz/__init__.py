"""A program-level differential fuzzer: random autograd programs run under hookgrad and torch.

``python -m tests.fuzz --seed 0 --count 50000`` (or ``make fuzz``) runs it from the repository
root; ``tests/fuzz/test_programs.py`` runs a fixed seed range inside ``make test``.
"""
