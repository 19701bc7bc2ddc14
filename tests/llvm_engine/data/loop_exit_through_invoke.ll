; A loop exited through an invoke's unwind edge: unify-loop-exits cannot
; rewrite it (it needs the exit's branch to be a plain one), so kiln refuses
; the action on this module instead of letting LLVM 19 build an invalid one.
declare void @may_throw()
declare i32 @__gxx_personality_v0(...)

define void @f(i1 %c) personality ptr @__gxx_personality_v0 {
entry:
  br label %loop
loop:
  invoke void @may_throw() to label %next unwind label %pad
next:
  br i1 %c, label %loop, label %exit
exit:
  ret void
pad:
  %lp = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %lp
}
