"""A module that cannot run without its configuration: docs/python.md
shows what the kcall tool reports when its plugin runs this file."""
import os

import kcall

kcall.register_func("mymod.add", lambda a, b: a + b)
if "MYMOD_CONFIG" not in os.environ:
    raise RuntimeError("no config")
