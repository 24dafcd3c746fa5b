"""The CPU backend: NumPy does the work, so no SIMD level is chosen here."""


def get_cpu_capability() -> str:
    return "DEFAULT"
