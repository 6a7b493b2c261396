# Helpers that turn folders into object libraries, so each concern compiles (and fails) on its
# own, and the layering is enforced by what each module can see.
#
# Every module gets an include root of its own, generated in <build>/skv_include/<module>: links
# to its own folders and to the folders of the modules it depends on (transitively), and nothing
# else. Beside it, only the public headers (core/include) are on its include path. A module that
# includes a header of a module it does not depend on fails to compile. Link names: a folder
# core/src/<x> is reached as "<x>/..." ("util/coding.h"), a folder tests/<x> as "<x>/..." (the way
# the tests include their helpers: "support/fake_slots/fake_slot_handles.h"); any other folder by
# its path from the repository root ("platform/posix/posix_error.h").

set(SKV_CORE_MODULES "" CACHE INTERNAL "")
set(SKV_INCLUDE_ROOTS "${CMAKE_BINARY_DIR}/skv_include")

function(skv_warnings target)
  if(MSVC)
    return()
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wnon-virtual-dtor
                                            -Wno-unused-parameter)
  # GCC 12 at -O3 (Release) reports false -Wrestrict overlaps inside libstdc++'s string
  # concatenation ("lit" + std::to_string(n)); a known compiler bug, not ours.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(SKV_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# The modules `mods` depend on, transitively, with `mods` themselves, in `out`.
function(skv_module_closure out)
  set(todo ${ARGN})
  set(seen "")
  while(todo)
    list(POP_FRONT todo m)
    if(m IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${m})
    get_property(deps GLOBAL PROPERTY SKV_MODULE_DEPS_${m})
    list(APPEND todo ${deps})
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# Builds the include root <build>/skv_include/<root>: links to the folders of `mods` and of every
# module they depend on, plus the extra folders given after FOLDERS. Returns its path in `out`.
function(skv_include_root out root)
  cmake_parse_arguments(A "" "" "MODULES;FOLDERS" ${ARGN})
  skv_module_closure(mods ${A_MODULES})
  set(folders ${A_FOLDERS})
  foreach(m IN LISTS mods)
    get_property(f GLOBAL PROPERTY SKV_MODULE_FOLDERS_${m})
    list(APPEND folders ${f})
  endforeach()
  list(REMOVE_DUPLICATES folders)
  list(SORT folders)
  set(dir "${SKV_INCLUDE_ROOTS}/${root}")
  file(REMOVE_RECURSE "${dir}")
  set(linked "")
  foreach(f IN LISTS folders)
    # A folder inside one already linked is reached through that link (and a link made inside
    # it would land in the source tree).
    set(covered FALSE)
    foreach(l IN LISTS linked)
      string(FIND "${f}/" "${l}/" at)
      if(at EQUAL 0)
        set(covered TRUE)
      endif()
    endforeach()
    if(covered)
      continue()
    endif()
    list(APPEND linked "${f}")
    string(REGEX REPLACE "^(core/src|tests)/" "" link "${f}")
    get_filename_component(parent "${dir}/${link}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${f}" "${dir}/${link}" SYMBOLIC)
  endforeach()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# skv_object(<name> <folder>... [DEPS <module>...] [LIBS <target>...])
# Creates OBJECT library skv_obj_<name> from the .cpp files of the folders (paths from the
# repository root). It sees the public headers, its own folders and those of its DEPS.
function(skv_object name)
  cmake_parse_arguments(A "" "" "DEPS;LIBS" ${ARGN})
  set(srcs "")
  foreach(dir IN LISTS A_UNPARSED_ARGUMENTS)
    file(GLOB s CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.cpp)
    list(APPEND srcs ${s})
  endforeach()
  if(NOT srcs)
    # An empty folder still yields a valid (empty) module.
    set(srcs ${PROJECT_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  set_property(GLOBAL PROPERTY SKV_MODULE_FOLDERS_${name} ${A_UNPARSED_ARGUMENTS})
  set_property(GLOBAL PROPERTY SKV_MODULE_DEPS_${name} ${A_DEPS})
  add_library(skv_obj_${name} OBJECT ${srcs})
  skv_include_root(root ${name} MODULES ${name})
  target_include_directories(skv_obj_${name} PUBLIC ${PROJECT_SOURCE_DIR}/core/include)
  target_include_directories(skv_obj_${name} PRIVATE ${root})
  # Usage requirements of the modules this one depends on (not their objects): what passes down
  # is the third-party libraries, collected at configure time (a $<TARGET_PROPERTY:...> chain
  # would leave nested generator expressions unevaluated in the link line).
  set(libs ${A_LIBS})
  foreach(d IN LISTS A_DEPS)
    get_property(dep_libs GLOBAL PROPERTY SKV_MODULE_LIBS_${d})
    list(APPEND libs ${dep_libs})
  endforeach()
  list(REMOVE_DUPLICATES libs)
  set_property(GLOBAL PROPERTY SKV_MODULE_LIBS_${name} ${libs})
  if(libs)
    target_link_libraries(skv_obj_${name} PUBLIC ${libs})
  endif()
  target_compile_features(skv_obj_${name} PUBLIC cxx_std_20)
  skv_warnings(skv_obj_${name})
endfunction()

function(skv_module name)
  skv_object(${name} ${ARGN})
  set(SKV_CORE_MODULES ${SKV_CORE_MODULES} ${name} CACHE INTERNAL "")
  add_library(skv_${name} ALIAS skv_obj_${name})
endfunction()

# skv_link_modules(<target> <module>...): links the objects of the modules and of everything
# they depend on (tests and benchmarks of internals use it).
function(skv_link_modules target)
  skv_module_closure(mods ${ARGN})
  foreach(m IN LISTS mods)
    target_link_libraries(${target} PRIVATE skv_obj_${m})
  endforeach()
endfunction()

# skv_use_modules(<target> <module>... [FOLDERS <folder>...]): gives a program outside the
# modules (a tool, the web glue) an include root with those modules' folders and its own.
function(skv_use_modules target)
  cmake_parse_arguments(A "" "" "FOLDERS" ${ARGN})
  skv_include_root(root ${target} MODULES ${A_UNPARSED_ARGUMENTS} FOLDERS ${A_FOLDERS})
  target_include_directories(${target} PRIVATE ${root} ${PROJECT_SOURCE_DIR}/core/include)
endfunction()

# A platform: object library (seeing the core's util module and its own folder) plus an
# installable static library.
function(skv_platform name dir)
  skv_object(${name} ${dir} ${ARGN} DEPS util)
  add_library(skv_${name} STATIC $<TARGET_OBJECTS:skv_obj_${name}>)
  target_link_libraries(skv_${name} PUBLIC skv_core)
endfunction()

# The native twin: POSIX platform + thread-pool executor + default_platform().
function(skv_native)
  skv_object(native native DEPS util crypto posix LIBS Threads::Threads)
  add_library(skv_native STATIC $<TARGET_OBJECTS:skv_obj_native> $<TARGET_OBJECTS:skv_obj_posix>)
  target_link_libraries(skv_native PUBLIC skv_core Threads::Threads)
  add_library(skv::skv ALIAS skv_native)
endfunction()
