# Third-party dependencies and toolchain settings.
#
# Natively: zstd from Debian's libzstd-dev (CMake package), libsodium from libsodium-dev
# (pkg-config only). For wasm32 (Emscripten): both are built from Debian's source packages by
# tools/build-wasm-deps.sh into <build>/_deps/wasm (reused across build folders through
# WASM_DEPS_CACHE, default ~/.cache/skv/wasm-deps).
#
# Provides:
#   SKV_ZSTD_TARGET    the target to link for zstd (the core's sstable module links it)
#   skv_sodium         an INTERFACE/IMPORTED target for libsodium (the crypto module links it)
#   skv_libcrypto      natively with SKV_OPENSSL: OpenSSL's libcrypto from libssl-dev
#                      (pkg-config), which the crypto module seals and opens with
#   SKV_WASM_LINK_OPTIONS  link options every wasm executable gets (empty natively)

if(EMSCRIPTEN)
  set(SKV_WASM_DEPS_PREFIX "${CMAKE_BINARY_DIR}/_deps/wasm" CACHE PATH "wasm32 dependency prefix")
  set(_skv_deps_script "${CMAKE_CURRENT_SOURCE_DIR}/tools/build-wasm-deps.sh")
  # The script returns at once when the prefix's stamp matches its own hash, so it runs on every
  # configure; editing it re-runs the configure step.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_skv_deps_script}")
  execute_process(COMMAND bash "${_skv_deps_script}" "${SKV_WASM_DEPS_PREFIX}"
                  RESULT_VARIABLE _rc)
  if(_rc)
    message(FATAL_ERROR "tools/build-wasm-deps.sh failed (${_rc})")
  endif()

  add_library(skv_zstd STATIC IMPORTED GLOBAL)
  set_target_properties(skv_zstd PROPERTIES
    IMPORTED_LOCATION "${SKV_WASM_DEPS_PREFIX}/lib/libzstd.a"
    INTERFACE_INCLUDE_DIRECTORIES "${SKV_WASM_DEPS_PREFIX}/include")
  set(SKV_ZSTD_TARGET skv_zstd)

  add_library(skv_sodium STATIC IMPORTED GLOBAL)
  set_target_properties(skv_sodium PROPERTIES
    IMPORTED_LOCATION "${SKV_WASM_DEPS_PREFIX}/lib/libsodium.a"
    INTERFACE_INCLUDE_DIRECTORIES "${SKV_WASM_DEPS_PREFIX}/include")

  # Tests and tools run under node. Node >= 18 has a global fetch(), which makes emcc 3.1.6's
  # loader try to fetch() the .wasm file and fail; --no-experimental-fetch turns it off.
  find_program(SKV_NODE_EXECUTABLE NAMES node nodejs REQUIRED)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${SKV_NODE_EXECUTABLE};--no-experimental-fetch")
  set(SKV_WASM_LINK_OPTIONS -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sEXIT_RUNTIME=1)
  # The tests' .js loaders are CommonJS; the repository's package.json says "type": "module"
  # (for the npm package), which node would apply to the build folder too.
  file(WRITE "${CMAKE_BINARY_DIR}/package.json" "{ \"type\": \"commonjs\" }\n")

  # Debian's emcc runs acorn-optimizer.js (node) on every -O1+ link and needs NODE_PATH to find
  # acorn. Set it for the link step so a build works without it in the environment.
  if(NOT DEFINED CMAKE_CXX_LINKER_LAUNCHER AND NOT DEFINED ENV{NODE_PATH}
     AND EXISTS /usr/share/nodejs/acorn)
    set(CMAKE_CXX_LINKER_LAUNCHER "${CMAKE_COMMAND};-E;env;NODE_PATH=/usr/share/nodejs")
  endif()
else()
  find_package(zstd CONFIG REQUIRED)
  if(TARGET zstd::libzstd_shared)
    set(SKV_ZSTD_TARGET zstd::libzstd_shared)
  else()
    set(SKV_ZSTD_TARGET zstd::libzstd_static)
  endif()

  find_package(PkgConfig REQUIRED)
  pkg_check_modules(SKV_SODIUM REQUIRED IMPORTED_TARGET libsodium)
  add_library(skv_sodium INTERFACE)
  target_link_libraries(skv_sodium INTERFACE PkgConfig::SKV_SODIUM)
  if(SKV_OPENSSL)
    pkg_check_modules(SKV_LIBCRYPTO REQUIRED IMPORTED_TARGET libcrypto)
    add_library(skv_libcrypto INTERFACE)
    target_link_libraries(skv_libcrypto INTERFACE PkgConfig::SKV_LIBCRYPTO)
  endif()

  set(SKV_WASM_LINK_OPTIONS "")
endif()
