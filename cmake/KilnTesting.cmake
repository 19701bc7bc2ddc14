# kiln_add_test(NAME name SOURCES a.cpp ... LIBS lib ... LABELS unit|integration|slow|... ...)
# One GoogleTest executable; every test case becomes a ctest test with the labels.
include(GoogleTest)
function(kiln_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} kiln_test_support GTest::gtest GTest::gmock
                                          GTest::gtest_main)
  kiln_warnings(${T_NAME})
  # Discovery flattens a label list into separate words, so it gets the first
  # label and a ctest script run after discovery sets the whole list.
  list(GET T_LABELS 0 firstLabel)
  gtest_discover_tests(${T_NAME}
    PROPERTIES LABELS ${firstLabel} TIMEOUT ${T_TIMEOUT}
    DISCOVERY_TIMEOUT 60)
  list(LENGTH T_LABELS labelCount)
  if(labelCount GREATER 1)
    set(script ${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_labels.cmake)
    file(WRITE ${script} "foreach(test IN LISTS ${T_NAME}_TESTS)
  set_tests_properties(\${test} PROPERTIES LABELS \"${T_LABELS}\")
endforeach()
")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
  endif()
endfunction()
