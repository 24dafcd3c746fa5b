"""The ``hookgrad`` command: ``hookgrad --version``, and
``hookgrad demo [--quick] [--epochs N] [--out DIR] [--seed S]``."""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hookgrad",
        description="hookgrad: a define-by-run autograd engine on NumPy where everything "
                    "autograd does is visible through hooks.")

    parser.add_argument("--version", action="version", version=f"hookgrad {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="command")
    demo = commands.add_parser(
        "demo", help="train a small CNN on 8x8 digits with and without a memory policy",
        description="Train a small CNN on scikit-learn's bundled 8x8 handwritten digits twice: "
                    "without a memory policy, and with one chosen by hookgrad.memory.plan at a "
                    "quarter of the first run's saved bytes. Prints both runs' test accuracy, "
                    "step time and per-module saved bytes side by side; captures the first "
                    "convolution's outputs and the last layer's gradients with hookgrad.capture "
                    "and writes them, PNG figures and results.json to --out. Optional packages "
                    "(tqdm, matplotlib, scikit-learn, safetensors: pip install hookgrad[demo]) "
                    "each degrade one feature when missing.")
    from .demo import add_arguments  # the demo loads only for its subcommand

    add_arguments(demo)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "demo":
        from .demo import run  # the demo loads only for its subcommand

        return run(args)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
