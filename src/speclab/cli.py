"""The `speclab` command: one subcommand per task, each defined in the module it belongs to.

Each subcommand module offers `add_arguments(parser)` and `run(args) -> int` (the exit
status). Bad arguments end with a one-line error (argparse's exit status 2), never a traceback.
"""

import argparse
import importlib
import sys

# name -> (module, one-line help); a module is imported only when its subcommand is built.
SUBCOMMANDS = {
    "check-guesses": ("speclab.exercises", "check a CSV of guesses against the ABCDEFG path"),
    "demo": ("speclab.demo", "speculative decoding on the shipped model, coloured"),
    "bench": ("speclab.bench", "benchmark: forward cost, speedup per scenario"),
    "train": ("speclab.train", "train the target or draft model in numpy"),
    "handouts": ("speclab.handouts", "build printable handouts (HTML, PDF) from lessons/"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="speclab", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue  # not built yet
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
