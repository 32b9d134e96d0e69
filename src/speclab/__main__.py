import sys

try:
    from speclab.cli import console
except KeyboardInterrupt:  # Ctrl-C before main() could catch it
    print("interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(console())
