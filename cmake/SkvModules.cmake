# Helpers that turn folders into object libraries, so each concern compiles (and fails) on its
# own and the layering is enforced by what each module may link.

set(SKV_CORE_MODULES "" CACHE INTERNAL "")

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

# skv_object(<name> <folder>... [DEPS <module>...] [LIBS <target>...])
# Creates OBJECT library skv_obj_<name> from the .cpp files of the folders.
function(skv_object name)
  cmake_parse_arguments(A "" "" "DEPS;LIBS" ${ARGN})
  set(srcs "")
  foreach(dir IN LISTS A_UNPARSED_ARGUMENTS)
    file(GLOB s CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*.cpp)
    list(APPEND srcs ${s})
  endforeach()
  if(NOT srcs)
    # An empty folder still yields a valid (empty) module.
    set(srcs ${CMAKE_CURRENT_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  add_library(skv_obj_${name} OBJECT ${srcs})
  target_include_directories(skv_obj_${name} PUBLIC
    ${CMAKE_CURRENT_SOURCE_DIR}/core/include ${CMAKE_CURRENT_SOURCE_DIR}/core/src
    ${CMAKE_CURRENT_SOURCE_DIR})
  # Usage requirements of the modules this one may depend on (not their objects): every module
  # shares the include folders above, so what passes down is the third-party libraries, collected
  # at configure time (a $<TARGET_PROPERTY:...> chain would leave nested generator expressions
  # unevaluated in the link line).
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

# A platform: object library for tests plus an installable static library.
function(skv_platform name dir)
  skv_object(${name} ${dir} DEPS util)
  add_library(skv_${name} STATIC $<TARGET_OBJECTS:skv_obj_${name}>)
  target_link_libraries(skv_${name} PUBLIC skv_core)
endfunction()

# The native twin: POSIX platform + thread-pool executor + default_platform().
function(skv_native)
  skv_object(native native DEPS util LIBS Threads::Threads)
  add_library(skv_native STATIC $<TARGET_OBJECTS:skv_obj_native> $<TARGET_OBJECTS:skv_obj_posix>)
  target_link_libraries(skv_native PUBLIC skv_core Threads::Threads)
  add_library(skv::skv ALIAS skv_native)
endfunction()
