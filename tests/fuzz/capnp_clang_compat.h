// Force-included in the clang fuzz build only. Cap'n Proto 0.9 (Debian 12)
// leaves out `const char* == kj::StringPtr` in C++20 and relies on the reversed
// member operator, which clang >= 16 no longer uses because StringPtr also
// declares operator!= (P2468). These restore the C++17 declarations.
#pragma once

#include <kj/string.h>

#if __cpp_impl_three_way_comparison && defined(__clang__)
namespace kj {
// Both sides spelled as StringPtr: `b == a` would pick these very functions.
inline bool operator==(const char* a, const StringPtr& b) { return b == StringPtr(a); }
inline bool operator!=(const char* a, const StringPtr& b) { return !(b == StringPtr(a)); }
inline bool operator==(const char* a, const String& b) { return StringPtr(b) == StringPtr(a); }
inline bool operator!=(const char* a, const String& b) { return !(StringPtr(b) == StringPtr(a)); }
}  // namespace kj
#endif
