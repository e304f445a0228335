# Packaging a build that is already made: KCALL_PREBUILT_DIR names a kcall
# build directory of this source tree, and the project configured here (the
# Python package, as scikit-build-core builds it) compiles only the
# extension and the Python plugin; libkcall, its headers, the kcall tool,
# libkcall_cuda, the CMake package and kcall.pc are that build's, installed
# by its own install rules. `make test` packages the build it tests this
# way, so the library is compiled once; a plain `pip install .` leaves
# KCALL_PREBUILT_DIR empty and builds everything itself.
#
# Every configured build directory holds kcallPrebuilt.cmake (written by
# kcall_write_prebuilt_file below): what it was configured from and with,
# and its targets as a build tree exports them.

# Writes <build>/kcallPrebuilt.cmake; called at the end of a normal
# configure, when every target exists.
function(kcall_write_prebuilt_file)
  export(EXPORT kcallTargets NAMESPACE kcall::
         FILE ${PROJECT_BINARY_DIR}/kcallBuildTreeTargets.cmake)
  set(_targets kcall kcall_static kcall_cli kcall_ort kcall_tf)
  if(TARGET kcall_cuda)
    list(APPEND _targets kcall_cuda)
  endif()
  file(WRITE ${PROJECT_BINARY_DIR}/kcallPrebuilt.cmake
"# Written by kcall's CMakeLists.txt: what a package configured with
# -DKCALL_PREBUILT_DIR=<this directory> takes from this build
# (cmake/kcall_prebuilt.cmake).
set(KCALL_PREBUILT_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
set(KCALL_PREBUILT_VERSION \"${PROJECT_VERSION}\")
set(KCALL_PREBUILT_INSTALL_DIRS \"${CMAKE_INSTALL_BINDIR};${CMAKE_INSTALL_LIBDIR};${CMAKE_INSTALL_INCLUDEDIR}\")
set(KCALL_PREBUILT_TARGETS \"${_targets}\")
set(KCALL_PREBUILT_EXPORT \"${PROJECT_BINARY_DIR}/kcallBuildTreeTargets.cmake\")
")
endfunction()

# Sets KCALL_USE_PREBUILT in the caller's scope: ON when KCALL_PREBUILT_DIR
# is set and its build can be packaged as it is. A directory that is not a
# configured kcall build of this source tree is an error; one whose install
# layout differs from this configuration's (GNUInstallDirs chose lib64
# there, say) cannot be installed into the package's layout, so the
# package then builds the library itself, saying why.
function(kcall_check_prebuilt)
  set(KCALL_USE_PREBUILT OFF PARENT_SCOPE)
  if(NOT KCALL_PREBUILT_DIR)
    return()
  endif()
  set(_dir ${KCALL_PREBUILT_DIR})
  set(_file ${_dir}/kcallPrebuilt.cmake)
  if(NOT EXISTS ${_file})
    message(FATAL_ERROR "KCALL_PREBUILT_DIR='${_dir}': expected a configured kcall "
            "build directory (holding kcallPrebuilt.cmake), found none there; "
            "configure and build one first (`make build BUILD=DIR`), or leave "
            "KCALL_PREBUILT_DIR empty to build the library here")
  endif()
  include(${_file})
  get_filename_component(_theirs "${KCALL_PREBUILT_SOURCE_DIR}" REALPATH)
  get_filename_component(_ours "${PROJECT_SOURCE_DIR}" REALPATH)
  if(NOT _theirs STREQUAL _ours)
    message(FATAL_ERROR "KCALL_PREBUILT_DIR='${_dir}': expected a build of "
            "this source tree (${_ours}), found a build of ${_theirs}")
  endif()
  if(NOT KCALL_PREBUILT_VERSION STREQUAL PROJECT_VERSION)
    message(FATAL_ERROR "KCALL_PREBUILT_DIR='${_dir}': expected a build of "
            "kcall ${PROJECT_VERSION}, found ${KCALL_PREBUILT_VERSION}: "
            "rebuild it")
  endif()
  set(_layout "${CMAKE_INSTALL_BINDIR};${CMAKE_INSTALL_LIBDIR};${CMAKE_INSTALL_INCLUDEDIR}")
  if(NOT KCALL_PREBUILT_INSTALL_DIRS STREQUAL _layout)
    message(STATUS "kcall: not packaging the build in ${_dir}: its install "
            "directories (bin, lib, include) are ${KCALL_PREBUILT_INSTALL_DIRS}, "
            "this configuration's are ${_layout}; building the library here")
    return()
  endif()
  set(KCALL_USE_PREBUILT ON PARENT_SCOPE)
endfunction()

# The project in prebuilt mode: the library as imported targets (`kcall`,
# `kcall_headers`, the names python/ links), the extension built against
# it, and an install that runs the prebuilt build's own install first.
function(kcall_configure_prebuilt)
  set(_dir ${KCALL_PREBUILT_DIR})
  include(${_dir}/kcallPrebuilt.cmake)
  message(STATUS "kcall: packaging the library built in ${_dir} "
                 "(${KCALL_PREBUILT_TARGETS})")
  include(${KCALL_PREBUILT_EXPORT})
  add_library(kcall ALIAS kcall::kcall)
  add_library(kcall_headers ALIAS kcall::headers)
  # Brings the build up to date (nothing to do after `make build`), so
  # that what is installed is what the sources say.
  add_custom_target(kcall_prebuilt ALL
    COMMAND ${CMAKE_COMMAND} --build ${_dir} --target ${KCALL_PREBUILT_TARGETS}
    COMMENT "Bringing the kcall build in ${_dir} up to date"
    USES_TERMINAL VERBATIM)
  # Installed first, as the build's own `cmake --install` does it: the
  # install prefix and stripping are this install's.
  install(CODE "
    set(_args --install \"${_dir}\" --prefix \"\${CMAKE_INSTALL_PREFIX}\")
    if(CMAKE_INSTALL_DO_STRIP)
      list(APPEND _args --strip)
    endif()
    execute_process(COMMAND \"${CMAKE_COMMAND}\" \${_args} RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR \"installing the kcall build in ${_dir} failed (status \${_rc})\")
    endif()")
  if(KCALL_BUILD_PYTHON)
    add_subdirectory(${PROJECT_SOURCE_DIR}/python ${PROJECT_BINARY_DIR}/python)
    add_dependencies(kcall_python kcall_prebuilt)
  endif()
endfunction()
