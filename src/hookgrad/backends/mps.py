"""Apple's Metal backend: never built here."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
