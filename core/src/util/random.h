// splitmix64: a small, fully specified pseudo-random generator. Everything seeded in skv (fault
// draws, simulated crashes, the tests' generators) uses it, so a seed replays the same run on
// every platform and compiler.
//
// Thread safety: pure functions over the caller's state.

#ifndef SKV_UTIL_RANDOM_H_
#define SKV_UTIL_RANDOM_H_

#include <cstdint>

namespace skv {

// A well-mixed 64-bit function of x: the splitmix64 output for state x.
inline uint64_t splitmix64_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The next number of the sequence whose state is *state, advancing it.
inline uint64_t splitmix64_next(uint64_t* state) {
  const uint64_t r = splitmix64_mix(*state);
  *state += 0x9e3779b97f4a7c15ull;
  return r;
}

}  // namespace skv

#endif  // SKV_UTIL_RANDOM_H_
