# What `cmake --install` puts under a prefix (docs/install.md), and in which
# install component, one per Debian package (cmake/KilnPackage.cmake):
#   bin/kiln                           runtime  (kiln)
#   include/kiln/...                   dev      (kiln-dev) the public headers:
#                                      include/kiln/ of the tree, and the
#                                      generated version.h and error_codes.h
#   lib/<multiarch>/libkiln_*.a        dev      the libraries behind
#                                      kiln::client and kiln::session
#   lib/<multiarch>/cmake/kiln/        dev      find_package(kiln [COMPONENTS
#                                      client session])
#   lib/python3/dist-packages/kiln/    python   (python3-kiln, python/CMakeLists.txt)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# An install rule without COMPONENT (the kiln binary's) is the runtime's.
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME runtime)

# Debian's multiarch layout (lib/x86_64-linux-gnu) for every prefix, not only
# for /usr, where GNUInstallDirs picks it: a build configured for /usr/local
# still packages its libraries where Debian's own -dev packages put theirs,
# and find_package searches lib/<multiarch>/cmake under any prefix.
if(CMAKE_LIBRARY_ARCHITECTURE AND CMAKE_INSTALL_LIBDIR STREQUAL "lib")
  set(KILN_INSTALL_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE})
else()
  set(KILN_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
endif()
set(KILN_INSTALL_CMAKEDIR ${KILN_INSTALL_LIBDIR}/cmake/kiln)

# The components of find_package(kiln): each is the target kiln_<name>,
# exported as kiln::<name>, with the libraries it links.
set(KILN_PACKAGE_COMPONENTS client session)

# kiln_install_library(target [EXPORT_NAME name])
# Marks `target` as installed; kiln_install_package() installs it into the
# export set of the component(s) that link it. Its public headers are those
# of include/kiln/, installed whole.
function(kiln_install_library target)
  cmake_parse_arguments(ARG "" "EXPORT_NAME" "" ${ARGN})
  if(KILN_FUZZ)
    return()
  endif()
  if(ARG_EXPORT_NAME)
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME})
  endif()
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  set_property(GLOBAL APPEND PROPERTY KILN_INSTALLED_LIBRARIES ${target})
endfunction()

# The installed libraries `root` reaches through what it links (as a
# project linking the exported target sees it: INTERFACE_LINK_LIBRARIES,
# with a static library's private links as $<LINK_ONLY:...>).
function(kiln_installed_closure root installed out)
  set(queue ${root})
  set(seen)
  while(queue)
    list(POP_FRONT queue target)
    if(target IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${target})
    get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
    foreach(link IN LISTS links)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" link "${link}")
      if(TARGET "${link}")
        get_target_property(aliased ${link} ALIASED_TARGET)
        if(aliased)
          set(link ${aliased})
        endif()
      endif()
      if(link IN_LIST installed)
        list(APPEND queue ${link})
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# One export set per component (kilnClientTargets, kilnSessionTargets) and
# one for what both link (kilnCoreTargets), so that kilnConfig.cmake finds
# only the dependencies of the components asked for.
function(kiln_install_export_sets)
  get_property(installed GLOBAL PROPERTY KILN_INSTALLED_LIBRARIES)
  set(core ${installed})
  set(any)
  foreach(component IN LISTS KILN_PACKAGE_COMPONENTS)
    kiln_installed_closure(kiln_${component} "${installed}" reach_${component})
    list(APPEND any ${reach_${component}})
    set(kept)
    foreach(target IN LISTS core)
      if(target IN_LIST reach_${component})
        list(APPEND kept ${target})
      endif()
    endforeach()
    set(core ${kept})
  endforeach()
  foreach(target IN LISTS installed)
    if(NOT target IN_LIST any)
      message(FATAL_ERROR "kiln_install_library(${target}): neither kiln::client nor "
                          "kiln::session links ${target}; only their libraries are installed "
                          "(cmake/KilnInstall.cmake)")
    endif()
  endforeach()
  set(KILN_EXPORT_core ${core})
  foreach(component IN LISTS KILN_PACKAGE_COMPONENTS)
    list(REMOVE_ITEM reach_${component} ${core})
    set(KILN_EXPORT_${component} ${reach_${component}})
  endforeach()
  foreach(set core ${KILN_PACKAGE_COMPONENTS})
    if(NOT KILN_EXPORT_${set})
      # kilnConfig.cmake includes each set's targets file.
      message(FATAL_ERROR "kiln's export set ${set} is empty (cmake/KilnInstall.cmake)")
    endif()
    string(SUBSTRING ${set} 0 1 first)
    string(TOUPPER ${first} first)
    string(SUBSTRING ${set} 1 -1 rest)
    install(TARGETS ${KILN_EXPORT_${set}} EXPORT kiln${first}${rest}Targets
            DESTINATION ${KILN_INSTALL_LIBDIR} COMPONENT dev)
    install(EXPORT kiln${first}${rest}Targets NAMESPACE kiln::
            DESTINATION ${KILN_INSTALL_CMAKEDIR} COMPONENT dev)
  endforeach()
endfunction()

# After every folder is added: the package files.
function(kiln_install_package)
  if(KILN_FUZZ)
    return()
  endif()
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln ${PROJECT_BINARY_DIR}/include/kiln
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
  kiln_install_export_sets()
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/kilnConfig.cmake
                                INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
          DESTINATION ${KILN_INSTALL_CMAKEDIR} COMPONENT dev)
endfunction()
