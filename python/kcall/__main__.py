"""`python -m kcall ARGS` and the `kcall` console script: the kcall tool.

Both run the C tool the package carries (bin/kcall, beside libkcall in
lib/), so `pip install kcall` gives the same command `make install` does.
"""

import os
import sys


def main():
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin",
                        "kcall")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        # exec, not a child process: the tool's exit status and signals
        # reach the caller untouched.
        os.execv(tool, ["kcall"] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("kcall: cannot run %s: %s\n" % (tool, e.strerror))
        return 127


if __name__ == "__main__":
    sys.exit(main())
