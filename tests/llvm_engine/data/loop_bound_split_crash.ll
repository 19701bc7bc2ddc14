; A real LLVM 19 crash: `opt-19 -passes='function(loop(loop-bound-split))'`
; dies with SIGSEGV on this module. Found by random pass sequences on
; kiln-bench-v0/adler32 and reduced with llvm-reduce-19; the crash tests use it
; to show that a pass crash inside a worker is contained.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define i32 @main() {
.preheader24:
  br label %codeRepl

codeRepl:                                         ; preds = %adler32_naive.exit.i, %.preheader24
  %0 = phi i64 [ %1, %adler32_naive.exit.i ], [ 0, %.preheader24 ]
  br label %adler32.exit.i

adler32.exit.i:                                   ; preds = %adler32.exit.i, %codeRepl
  %exitcond55.not = icmp eq i64 %0, 0
  br i1 %exitcond55.not, label %adler32_naive.exit.i, label %adler32.exit.i

adler32_naive.exit.i:                             ; preds = %adler32.exit.i
  %1 = add i64 %0, 1
  br label %codeRepl
}
