# kcall_add_plugin(<target> <source>...), installed with kcall's CMake
# package (find_package(kcall) includes this file): a kcall plugin, a
# MODULE library (dlopen'ed, never linked) that sees kcall's headers only
# (kcall::headers), links nothing of kcall and exports only its entry
# point (hidden visibility). C, C++ and CUDA sources alike; a source that
# includes <kcall/plugin_api.h> is compiled in its plugin mode without a
# define.
function(kcall_add_plugin target)
  if(NOT ARGN)
    message(FATAL_ERROR "kcall_add_plugin(${target}): no source files given")
  endif()
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE kcall::headers)
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
endfunction()
