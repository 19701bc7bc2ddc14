# Builds one kiln-bench-v0 program natively and runs it on each of its inputs (no argument, then
# 1, 2 and 3): -O2 with warnings as errors, and -O0 (optionally under ASan/UBSan). On every input
# both must exit 0 and print the same single "<name> ..." line, which shows the C is valid and
# deterministic; the four inputs must print four different lines, so each one is a separate check
# of the program's behaviour. Any other argument must be refused with exit code 2.
# Run as: cmake -DCLANG= -DNAME= -DSOURCE_DIR= -DWORK_DIR= -DSANITIZE=ON|OFF -P this
file(MAKE_DIRECTORY ${WORK_DIR})
set(source ${SOURCE_DIR}/${NAME}.c)
set(inputs 0 1 2 3) # 0 runs with no argument

function(build tag)
  execute_process(COMMAND ${CLANG} ${ARGN} -Wall -Wextra -Werror ${source}
                          -o ${WORK_DIR}/${NAME}-${tag}
    RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NAME} (${tag}) failed to compile (${rc}):\n${out}${err}")
  endif()
endfunction()

function(run tag input out_var)
  set(args)
  if(NOT input EQUAL 0)
    set(args ${input})
  endif()
  execute_process(COMMAND ${WORK_DIR}/${NAME}-${tag} ${args}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NAME} (${tag}, input ${input}) exited with ${rc}:\n${out}${err}")
  endif()
  if(NOT out MATCHES "^${NAME} [^\n]+\n$")
    message(FATAL_ERROR "${NAME} (${tag}, input ${input}) printed an unexpected result:\n${out}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

set(optimized_tag O2)
build(${optimized_tag} -O2)
if(SANITIZE)
  set(reference_tag O0-san)
  build(${reference_tag} -O0 -fsanitize=address,undefined -fno-sanitize-recover=all)
else()
  set(reference_tag O0)
  build(${reference_tag} -O0)
endif()

foreach(input IN LISTS inputs)
  run(${optimized_tag} ${input} optimized)
  run(${reference_tag} ${input} reference)
  if(NOT optimized STREQUAL reference)
    message(FATAL_ERROR "${NAME} (input ${input}): -O2 and -O0 disagree:\n${optimized}${reference}")
  endif()
  foreach(earlier IN LISTS seen_inputs)
    if(optimized STREQUAL "${output_${earlier}}")
      message(FATAL_ERROR "${NAME}: inputs ${earlier} and ${input} print the same result:\n"
                          "${optimized}")
    endif()
  endforeach()
  set(output_${input} "${optimized}")
  list(APPEND seen_inputs ${input})
  string(STRIP "${optimized}" line)
  message(STATUS "input ${input}: ${line}")
endforeach()

# A bad argument is refused before any work: usage on stderr, nothing on stdout, exit code 2.
execute_process(COMMAND ${WORK_DIR}/${NAME}-${optimized_tag} 4
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR err STREQUAL "")
  message(FATAL_ERROR "${NAME} 4 should only print usage to stderr and exit 2; it exited with "
                      "${rc}:\n${out}${err}")
endif()

file(REMOVE ${WORK_DIR}/${NAME}-${optimized_tag} ${WORK_DIR}/${NAME}-${reference_tag})
