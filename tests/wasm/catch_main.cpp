// Catch2's main() for the wasm32 build of the unit tests. (Natively the tests link
// Catch2::Catch2WithMain instead.) Compiled once and shared by every test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
