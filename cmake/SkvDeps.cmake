# Third-party dependencies: zstd (compression) natively from Debian's libzstd-dev, and for wasm32
# from Debian's source package, built by tools/build-wasm-deps.sh into the build folder.

if(EMSCRIPTEN)
  set(SKV_WASM_DEPS_PREFIX "${CMAKE_BINARY_DIR}/_deps/wasm" CACHE PATH "wasm32 dependency prefix")
  if(NOT EXISTS "${SKV_WASM_DEPS_PREFIX}/lib/libzstd.a")
    execute_process(COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/tools/build-wasm-deps.sh"
                            "${SKV_WASM_DEPS_PREFIX}" RESULT_VARIABLE _rc)
    if(_rc)
      message(FATAL_ERROR "tools/build-wasm-deps.sh failed (${_rc})")
    endif()
  endif()
  add_library(skv_zstd STATIC IMPORTED GLOBAL)
  set_target_properties(skv_zstd PROPERTIES
    IMPORTED_LOCATION "${SKV_WASM_DEPS_PREFIX}/lib/libzstd.a"
    INTERFACE_INCLUDE_DIRECTORIES "${SKV_WASM_DEPS_PREFIX}/include")
  set(SKV_ZSTD_TARGET skv_zstd)
else()
  find_package(zstd CONFIG REQUIRED)
  if(TARGET zstd::libzstd_shared)
    set(SKV_ZSTD_TARGET zstd::libzstd_shared)
  else()
    set(SKV_ZSTD_TARGET zstd::libzstd_static)
  endif()
endif()
