# What `cmake --install` puts under a prefix, for projects that build on kiln
# (docs/install.md):
#   bin/kiln
#   include/kiln/...                   the public headers: include/kiln/ of the
#                                      tree as it is, and the generated
#                                      version.h and error_codes.h
#   lib/libkiln_*.a                    the libraries behind kiln::session and
#                                      kiln::client
#   lib/cmake/kiln/                    find_package(kiln): kiln::session (the
#                                      kit and the worker runtime: write a
#                                      session type, serve it with runWorker),
#                                      kiln::client (the C++ client)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

# kiln_install_library(target [EXPORT_NAME name])
# Adds `target` to the kiln export set. Its public headers are those of
# include/kiln/, installed whole by kiln_install_package().
function(kiln_install_library target)
  cmake_parse_arguments(ARG "" "EXPORT_NAME" "" ${ARGN})
  if(KILN_FUZZ)
    return()
  endif()
  if(ARG_EXPORT_NAME)
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME})
  endif()
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS ${target} EXPORT kilnTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

# After every folder is added: the package files.
function(kiln_install_package)
  if(KILN_FUZZ)
    return()
  endif()
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln ${PROJECT_BINARY_DIR}/include/kiln
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/kilnConfig.cmake
                                INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
          DESTINATION ${KILN_INSTALL_CMAKEDIR})
endfunction()
