#!/bin/sh
# valgrind.sh PROGRAM [ARG]...
#
# Runs PROGRAM under valgrind's memcheck, as `make valgrind` has the tests
# do (-DKCALL_TEST_LAUNCHER=.../tests/valgrind.sh). Any invalid access, use
# of an uninitialised value or definite or indirect leak makes it exit 99,
# which no test expects, so the test fails and shows valgrind's report
# (on standard error). Memory still reachable at exit (what dlopen and the
# thread pool keep) is not an error. No suppressions are needed; one that
# ever is goes in a file given here with --suppressions, saying why.
exec valgrind --quiet --tool=memcheck --error-exitcode=99 \
  --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect "$@"
