# One bounded fuzz run for ctest: copies the seed corpus to a fresh directory
# (the fuzzer adds inputs to its corpus; the repository must stay untouched),
# runs until SECONDS or RUNS, and fails on any crash, leak, timeout or OOM.
# Usage: cmake -DFUZZER=... -DCORPUS=... -DWORK_DIR=... -DSECONDS=20 -DRUNS=200000 -P run_fuzzer.cmake
foreach(var FUZZER CORPUS WORK_DIR SECONDS RUNS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake needs -D${var}=...")
  endif()
endforeach()
if(NOT EXISTS ${FUZZER})
  message(FATAL_ERROR "fuzz target ${FUZZER} is not built")
endif()
if(NOT IS_DIRECTORY ${CORPUS})
  message(FATAL_ERROR "seed corpus ${CORPUS} is missing")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/corpus ${WORK_DIR}/artifacts)
file(GLOB seeds ${CORPUS}/*)
file(COPY ${seeds} DESTINATION ${WORK_DIR}/corpus)
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -runs=${RUNS} -timeout=10 -rss_limit_mb=2048
          -print_final_stats=1 -artifact_prefix=${WORK_DIR}/artifacts/ ${WORK_DIR}/corpus
  WORKING_DIRECTORY ${WORK_DIR}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
string(REGEX MATCH "stat::number_of_executed_units: *[0-9]+" executed "${output}")
message(STATUS "${FUZZER}: ${executed}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${output}\nfuzz run failed (exit ${result}); the input is in ${WORK_DIR}/artifacts")
endif()
