"""Exits before answering anything, as a target with a missing dependency does: exit 3."""

import sys

sys.stderr.write("faulty target: cannot find module 'left-pad'\n")
sys.exit(7)
