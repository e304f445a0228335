# The library as a Python wheel holds it. A wheel is a zip file, which
# stores a symbolic link as a copy of its target, so libkcall's usual three
# names (libkcall.so -> libkcall.so.MAJOR -> libkcall.so.VERSION) would be
# three copies of one library. The wheel keeps one file, named by the
# soname every binary records (libkcall.so.MAJOR); the CMake package and
# kcall.pc point at it, and `python -m kcall.config --libs` links it by
# that name. The static library, which a Python package has no use for,
# is left out, with its export set (kcallConfig.cmake includes it only
# when it is there).
#
# kcall_wheel_layout() adds the install step that does this. It must be
# called after every other install rule (the prebuilt build's install
# included, cmake/kcall_prebuilt.cmake), since it rewrites what they wrote.
function(kcall_wheel_layout)
  install(CODE "
    set(KCALL_WHEEL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
    set(KCALL_WHEEL_REAL \"libkcall.so.${PROJECT_VERSION}\")
    set(KCALL_WHEEL_SONAME \"libkcall.so.${PROJECT_VERSION_MAJOR}\")")
  install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/kcall_wheel_install.cmake)
endfunction()
