# Builds one kiln-bench-v0 program natively and runs it: -O2 with warnings as
# errors, and -O0 (optionally under ASan/UBSan). Both must exit 0 and print the
# same single "<name> ..." line, which shows the C is valid and deterministic.
# Run as: cmake -DCLANG= -DNAME= -DSOURCE_DIR= -DWORK_DIR= -DSANITIZE=ON|OFF -P this
file(MAKE_DIRECTORY ${WORK_DIR})
set(source ${SOURCE_DIR}/${NAME}.c)

function(build_and_run tag out_var)
  set(exe ${WORK_DIR}/${NAME}-${tag})
  execute_process(COMMAND ${CLANG} ${ARGN} -Wall -Wextra -Werror ${source} -o ${exe}
    RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NAME} (${tag}) failed to compile (${rc}):\n${out}${err}")
  endif()
  execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NAME} (${tag}) exited with ${rc}:\n${out}${err}")
  endif()
  if(NOT out MATCHES "^${NAME} [^\n]+\n$")
    message(FATAL_ERROR "${NAME} (${tag}) printed an unexpected result:\n${out}")
  endif()
  file(REMOVE ${exe})
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

build_and_run(O2 optimized -O2)
if(SANITIZE)
  build_and_run(O0-san reference -O0 -fsanitize=address,undefined -fno-sanitize-recover=all)
else()
  build_and_run(O0 reference -O0)
endif()
if(NOT optimized STREQUAL reference)
  message(FATAL_ERROR "${NAME}: -O2 and -O0 disagree:\n${optimized}${reference}")
endif()
message(STATUS "${optimized}")
