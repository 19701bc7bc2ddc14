// Whether this build runs under AddressSanitizer, for the few tests that
// crash on purpose (the sanitizer's own signal handlers change what a crash
// looks like) or leak on purpose (to imitate a killed process), and the two
// ways to tell its leak checker that a leak is intended (no-ops elsewhere).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define KILN_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ADDRESS_SANITIZER 1
#endif
#endif

#if defined(KILN_ADDRESS_SANITIZER)
#include <sanitizer/lsan_interface.h>
#endif

namespace kiln {

#if defined(KILN_ADDRESS_SANITIZER)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

// `object` (a heap allocation) and everything reachable from it are leaked
// on purpose, e.g. LLVM state abandoned after a caught crash.
inline void declareLeakedOnPurpose(const void* object) {
#if defined(KILN_ADDRESS_SANITIZER)
  if (object != nullptr) __lsan_ignore_object(object);
#else
  (void)object;
#endif
}

// While alive, what this thread allocates is never reported as leaked: for a
// test whose call crashes on purpose, so that what the crashed frames owned
// is abandoned by design and cannot be named one by one.
class LeaksOnPurposeScope {
 public:
  LeaksOnPurposeScope() {
#if defined(KILN_ADDRESS_SANITIZER)
    __lsan_disable();
#endif
  }
  ~LeaksOnPurposeScope() {
#if defined(KILN_ADDRESS_SANITIZER)
    __lsan_enable();
#endif
  }
  LeaksOnPurposeScope(const LeaksOnPurposeScope&) = delete;
  LeaksOnPurposeScope& operator=(const LeaksOnPurposeScope&) = delete;
};

}  // namespace kiln
