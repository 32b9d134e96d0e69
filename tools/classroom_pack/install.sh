#!/bin/sh
# speclab classroom pack, Linux and macOS: `sh install.sh` installs the lessons without
# internet, then opens JupyterLab. Run it again to open JupyterLab again (nothing is
# installed twice). `PYTHON=python3.12 sh install.sh` chooses the Python; `--no-launch`
# installs without opening JupyterLab. This pack serves: @SERVES@
cd "$(dirname "$0")" || exit 1
installer=speclab/tools/classroom_pack/install.py
if [ ! -f "$installer" ] || [ ! -d wheels ]; then
  echo "install.sh: run me in the classroom pack's folder (speclab/ and wheels/ beside me)" >&2
  exit 1
fi

# A Python 3 new enough to read the installer and say what it thinks of this pack.
readable() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 6))' >/dev/null 2>&1; }

if [ -n "${PYTHON:-}" ]; then
  chosen=$PYTHON
else
  # the first Python on PATH for which the pack has wheels; else the first one found,
  # so that the installer can say what the pack has instead
  chosen=
  first=
  for candidate in python3 python3.13 python3.12 python3.11; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    readable "$candidate" || continue
    [ -n "$first" ] || first=$candidate
    if "$candidate" "$installer" --check-only >/dev/null 2>&1; then
      chosen=$candidate
      break
    fi
  done
  [ -n "$chosen" ] || chosen=$first
fi
if [ -z "$chosen" ] || ! readable "$chosen"; then
  if [ -n "${PYTHON:-}" ]; then
    echo "install.sh: PYTHON=$PYTHON is not a Python 3.6 or newer that can run the installer." >&2
  else
    echo "install.sh: no Python 3 found." >&2
  fi
  echo "Install Python @PYTHONS@ (python.org, or your system's packages), then run:" >&2
  echo "  sh install.sh" >&2
  exit 1
fi
exec "$chosen" "$installer" "$@"
