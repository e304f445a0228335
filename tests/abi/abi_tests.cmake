# The ABI's compatibility fixtures and checks (docs/abi.md, "Compatibility
# fixtures"), included by tests/CMakeLists.txt. Adds the fixtures to
# KT_FIXTURE_TARGETS and sets KT_ABI_DEFINITIONS, the compile definitions
# test_abi.c reads.
set(KT_ABI_DIR ${CMAKE_CURRENT_SOURCE_DIR}/abi)
set(KT_ABI_V1_0 ${KT_ABI_DIR}/v1.0)

# ---- a plugin built for API 1.0 -------------------------------------------------
# Against the frozen 1.0 headers and nothing else: it does not link
# kcall_headers, so include/ is out of its sight.
add_library(kt_plugin_v1_0 MODULE ${KT_ABI_DIR}/plugin_compat.c)
target_include_directories(kt_plugin_v1_0 PRIVATE ${KT_ABI_V1_0})
target_link_libraries(kt_plugin_v1_0 PRIVATE kcall_warnings)
if(KCALL_SANITIZE STREQUAL "")
  target_link_options(kt_plugin_v1_0 PRIVATE LINKER:--no-undefined)
endif()
set_target_properties(kt_plugin_v1_0 PROPERTIES
  PREFIX "" SUFFIX ".so" LIBRARY_OUTPUT_DIRECTORY ${KT_FIXTURE_OUTPUT_DIR})
list(APPEND KT_FIXTURE_TARGETS kt_plugin_v1_0)

# The frozen headers stay as they were shipped.
add_test(NAME abi_v1_0_headers_frozen
         COMMAND sha256sum --check --strict SHA256SUMS
         WORKING_DIRECTORY ${KT_ABI_V1_0})

# The layouts frozen in src/plugin/abi_layout.c are those of the 1.0
# headers: its abi.h part compiles against them (a failure is a build
# error naming the field).
add_library(kt_abi_layout_v1_0 OBJECT ${PROJECT_SOURCE_DIR}/src/plugin/abi_layout.c)
target_include_directories(kt_abi_layout_v1_0 PRIVATE ${KT_ABI_V1_0})
target_compile_definitions(kt_abi_layout_v1_0 PRIVATE KC_ABI_LAYOUT_PLUGIN_ONLY)
target_link_libraries(kt_abi_layout_v1_0 PRIVATE kcall_warnings)

# ---- the same plugin from the other compiler ----------------------------------------
# A gcc build loads it built by clang, a clang build by gcc, so CI's two
# builds cover both directions. Without the other compiler the test says
# so and is skipped.
set(KT_OTHER_CC_NAME "")
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set(KT_OTHER_CC_NAME clang)
elseif(CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(KT_OTHER_CC_NAME gcc)
endif()
set(KT_OTHER_CC_PLUGIN "")
if(KT_OTHER_CC_NAME)
  find_program(KT_OTHER_CC NAMES ${KT_OTHER_CC_NAME})
endif()
if(KT_OTHER_CC)
  set(KT_OTHER_CC_PLUGIN ${KT_FIXTURE_OUTPUT_DIR}/kt_plugin_other_cc.so)
  # The flags kcall_add_plugin gives a plugin, spelled out for a compiler
  # CMake does not drive.
  set(_flags -std=c11 -O2 -g -fPIC -shared -fvisibility=hidden
      -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes)
  if(KCALL_WERROR)
    list(APPEND _flags -Werror)
  endif()
  add_custom_command(OUTPUT ${KT_OTHER_CC_PLUGIN}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${KT_FIXTURE_OUTPUT_DIR}
    COMMAND ${KT_OTHER_CC} ${_flags} -I${PROJECT_SOURCE_DIR}/include
            ${KT_ABI_DIR}/plugin_compat.c -o ${KT_OTHER_CC_PLUGIN}
            -Wl,--no-undefined
    DEPENDS ${KT_ABI_DIR}/plugin_compat.c ${PROJECT_SOURCE_DIR}/include/kcall/abi.h
            ${PROJECT_SOURCE_DIR}/include/kcall/abi_helpers.h
    COMMENT "Building kt_plugin_other_cc.so with ${KT_OTHER_CC}"
    VERBATIM)
  add_custom_target(kt_plugin_other_cc ALL DEPENDS ${KT_OTHER_CC_PLUGIN})
  list(APPEND KT_FIXTURE_TARGETS kt_plugin_other_cc)
endif()

set(KT_ABI_DEFINITIONS
  KC_V1_0_PLUGIN="$<TARGET_FILE:kt_plugin_v1_0>"
  KC_OTHER_CC_PLUGIN="${KT_OTHER_CC_PLUGIN}"
  KC_OTHER_CC_NAME="${KT_OTHER_CC_NAME}"
  KC_CC_ID="${CMAKE_C_COMPILER_ID}")

# ---- C++ sees the same layouts ------------------------------------------------------
# abi_layout.c compiled as C++, with every public header, linked to the
# library it describes.
add_executable(kt_abi_layout_cpp ${KT_ABI_DIR}/abi_layout_cpp.cpp)
target_include_directories(kt_abi_layout_cpp PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(kt_abi_layout_cpp PRIVATE kcall kcall_warnings)
add_test(NAME abi_layout_cpp COMMAND kt_abi_layout_cpp)

# ---- the ABI check itself ------------------------------------------------------------
# Every type of abi.h, and of the helpers it includes, is in the library
# make abi-check reads.
add_test(NAME abi_h_types_listed
         COMMAND sh ${KT_ABI_DIR}/check_types_listed.sh
                 ${PROJECT_SOURCE_DIR}/abi/kcall_abi_h.c
                 ${PROJECT_SOURCE_DIR}/include/kcall/abi.h
                 ${PROJECT_SOURCE_DIR}/include/kcall/abi_helpers.h)
# The check fails what the rules forbid and passes what they allow; skipped
# (exit 77, with the reason) without abigail-tools.
find_program(KT_PYTHON3 NAMES python3)
if(KT_PYTHON3)
  add_test(NAME abi_check_rules
           COMMAND ${KT_PYTHON3} ${KT_ABI_DIR}/abi_rules_test.py
                   --cc ${CMAKE_C_COMPILER} --root ${PROJECT_SOURCE_DIR}
                   --work ${CMAKE_CURRENT_BINARY_DIR}/abi_rules)
else()
  add_test(NAME abi_check_rules
           COMMAND sh -c "echo 'skipped: python3 not found'; exit 77")
endif()
set_tests_properties(abi_check_rules PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
