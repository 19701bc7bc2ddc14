# What `cmake --install` puts under a prefix, for projects that build on kiln
# (docs in README.md, "Install"):
#   bin/kiln
#   include/kiln/<folder>/<header>.h   the public headers, at the same relative
#                                      paths as in the tree ("worker/kit/...")
#   lib/libkiln_*.a                    the libraries behind kiln::session and
#                                      kiln::client
#   lib/cmake/kiln/                    find_package(kiln): kiln::session (the
#                                      kit and the worker runtime: write a
#                                      session type, serve it with runWorker),
#                                      kiln::client (the C++ client)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/kiln)
set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

# kiln_install_library(target [EXPORT_NAME name] [HEADERS h...] [GENERATED_HEADERS h...])
# Adds `target` to the kiln export set and installs its public headers:
# HEADERS relative to the repository root, GENERATED_HEADERS relative to the
# build root (both keep their relative path under include/kiln/).
function(kiln_install_library target)
  cmake_parse_arguments(ARG "" "EXPORT_NAME" "HEADERS;GENERATED_HEADERS" ${ARGN})
  if(KILN_FUZZ)
    return()
  endif()
  if(ARG_EXPORT_NAME)
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME})
  endif()
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${KILN_INSTALL_INCLUDEDIR}>)
  install(TARGETS ${target} EXPORT kilnTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  foreach(header IN LISTS ARG_HEADERS)
    cmake_path(GET header PARENT_PATH folder)
    install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${KILN_INSTALL_INCLUDEDIR}/${folder})
  endforeach()
  foreach(header IN LISTS ARG_GENERATED_HEADERS)
    cmake_path(GET header PARENT_PATH folder)
    install(FILES ${PROJECT_BINARY_DIR}/${header} DESTINATION ${KILN_INSTALL_INCLUDEDIR}/${folder})
  endforeach()
endfunction()

# After every folder is added: the package files.
function(kiln_install_package)
  if(KILN_FUZZ)
    return()
  endif()
  install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/kilnConfig.cmake
                                INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
          DESTINATION ${KILN_INSTALL_CMAKEDIR})
endfunction()
