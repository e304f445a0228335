# Helpers for the project's own plugins and tests.

# A plugin: a MODULE (made to be dlopen'ed, never linked) that sees kcall's
# headers only and reaches the library through the host table it is given
# (kcall/plugin_api.h's kc_* names call through it, in its default plugin
# mode). The installed kcall_add_plugin (kcallPlugin.cmake) does the same
# for users; this one adds the project's warnings, and outside sanitizer
# builds links with --no-undefined, which proves the point: the link fails
# if the plugin calls into libkcall directly. (Sanitizer runtimes leave
# their symbols to the host, hence the exception.)
function(kcall_add_plugin target)
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE kcall_headers kcall_warnings)
  if(KCALL_SANITIZE STREQUAL "")
    target_link_options(${target} PRIVATE LINKER:--no-undefined)
  endif()
endfunction()

# A test that runs a command and checks its exit code and output with
# tools/kcall/test/check_output.sh: kcall_output_test(NAME [checks] CMD...).
# An empty word would be lost on its way through ARGN: such tests call
# add_test themselves.
# A test whose command runs the kcall tool (KCALL_CLI_UNDER_TEST) gets the
# label cli, which `make valgrind` runs.
function(kcall_output_test name)
  add_test(NAME ${name}
           COMMAND sh ${PROJECT_SOURCE_DIR}/tools/kcall/test/check_output.sh ${ARGN})
  if("${KCALL_CLI_UNDER_TEST}" IN_LIST ARGN)
    kcall_label_cli_tests(${name})
  endif()
endfunction()

# Labels tests cli: tests that run the kcall tool (or, like cli_npy, its
# parts) that were made with add_test rather than kcall_output_test.
function(kcall_label_cli_tests)
  set_property(TEST ${ARGN} APPEND PROPERTY LABELS cli)
endfunction()
