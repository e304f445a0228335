# The ABI's checks (docs/abi.md), included by tests/CMakeLists.txt.
set(KT_ABI_DIR ${CMAKE_CURRENT_SOURCE_DIR}/abi)

# ---- C++ sees the same layouts ------------------------------------------------------
# abi_layout.c compiled as C++, with every public header, linked to the
# library it describes.
add_executable(kt_abi_layout_cpp ${KT_ABI_DIR}/abi_layout_cpp.cpp)
target_include_directories(kt_abi_layout_cpp PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(kt_abi_layout_cpp PRIVATE kcall kcall_warnings)
add_test(NAME abi_layout_cpp COMMAND kt_abi_layout_cpp)

# ---- the ABI check itself ------------------------------------------------------------
# Every type of abi.h is in the library make abi-check reads.
add_test(NAME abi_h_types_listed
         COMMAND sh ${KT_ABI_DIR}/check_types_listed.sh
                 ${PROJECT_SOURCE_DIR}/include/kcall/abi.h
                 ${PROJECT_SOURCE_DIR}/abi/kcall_abi_h.c)
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
