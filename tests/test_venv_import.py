#!/usr/bin/env python3
"""The set-up's venv imports flysim with no PYTHONPATH (test_venv_import.py BUILD_DIR): the
path file scripts/setup.sh writes names BUILD_DIR/python, whose module this is and whose host
backend runs."""
import os
import sys

want = os.path.realpath(os.path.join(sys.argv[1], "python"))
try:
    import flysim
    import flysim._flysim as module
except ImportError as e:
    sys.exit(f"test_venv_import: {sys.executable} cannot import flysim ({e}); fix: run "
             "scripts/setup.sh (it writes flysim-build.pth into the venv)")
got = os.path.realpath(module.__file__)
if not got.startswith(want + os.sep):
    sys.exit(f"test_venv_import: flysim from {got}, not {want}; fix: run scripts/setup.sh")
ok, why = flysim.backend_available("host")
if not ok:
    sys.exit(f"test_venv_import: the host backend does not run: {why}")
print(f"test_venv_import: {sys.executable} imports flysim from {want}: passed")
