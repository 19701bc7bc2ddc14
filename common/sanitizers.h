// Whether this build runs under AddressSanitizer, for the few tests that
// crash on purpose (the sanitizer's own signal handlers change what a crash
// looks like) or leak on purpose (to imitate a killed process).
#pragma once

namespace kiln {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

}  // namespace kiln
