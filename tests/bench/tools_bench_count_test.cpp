// The instruction count `kiln bench tools` makes of opt-19's IR text for its
// baseline: what LLVM counts (every instruction of every block), not lines.
#include <gtest/gtest.h>

#include "bench/tools_bench.h"

namespace kiln::bench {
namespace {

TEST(CountIrInstructions, CountsInstructionsNotLabelsCasesClausesOrComments) {
  constexpr std::string_view kIr = R"(; ModuleID = 'm'
@g = global i32 0
declare void @h()

define i32 @f(i32 %x) personality ptr null {
entry:
  %a = add i32 %x, 1
  switch i32 %a, label %d [
    i32 0, label %one
    i32 1, label %d
  ], !llvm.loop !0

one:                                              ; preds = %entry
  invoke void @h()
          to label %d unwind label %lp

lp:                                               ; preds = %one
  %l = landingpad { ptr, i32 }
          cleanup
          catch ptr null
  ret i32 0

"a b":
  ; a comment
  %"q r" = add i32 %a, 2
  br label %d

d:                                                ; preds = %"a b", %one, %entry
  %p = phi i32 [ 0, %entry ], [ 1, %one ], [ 2, %"a b" ]
  ret i32 %p
}

define void @empty() {
  ret void
}
)";
  // add, switch, invoke, landingpad, ret, add, br, phi, ret; ret.
  EXPECT_EQ(countIrInstructions(kIr), 10);
}

TEST(CountIrInstructions, ASwitchWhoseCloseCarriesMetadataEndsThere) {
  // "], !llvm.loop" closed no switch before: everything after it was taken
  // for its cases (heapsort after simplifycfg counted 658 for LLVM's 774).
  constexpr std::string_view kIr = R"(define void @f(i32 %x) {
  switch i32 %x, label %a [
    i32 0, label %a
  ], !llvm.loop !1

a:
  %y = add i32 %x, 1
  ret void
}
)";
  EXPECT_EQ(countIrInstructions(kIr), 3);
}

}  // namespace
}  // namespace kiln::bench
