// Modules LLVM 19 must refuse, for the tests of checks on the way in: each
// made honestly here, the bitcode ones with LLVM's own BitstreamWriter.
#pragma once

#include <llvm/Bitcode/LLVMBitCodes.h>
#include <llvm/Bitstream/BitstreamWriter.h>

#include <string>
#include <vector>

namespace kiln::datasets::testing {

// Bitcode as another LLVM would write it: the magic, an identification
// block naming `producer` with `epoch`, then a module block whose version
// record says 99 (LLVM 19 knows versions 0-2): what a newer LLVM's bitcode
// looks like to this one. With epoch != 0 LLVM stops at the epoch.
inline std::string foreignBitcode(const std::string& producer, unsigned epoch) {
  llvm::SmallVector<char, 0> buffer;
  {
    llvm::BitstreamWriter stream(buffer);
    // The magic, written as LLVM's writeBitcodeHeader writes it: 'B' 'C' 0x0C0DE.
    stream.Emit('B', 8);
    stream.Emit('C', 8);
    stream.Emit(0x0, 4);
    stream.Emit(0xC, 4);
    stream.Emit(0xE, 4);
    stream.Emit(0xD, 4);
    stream.EnterSubblock(llvm::bitc::IDENTIFICATION_BLOCK_ID, 5);
    llvm::SmallVector<unsigned, 32> name(producer.begin(), producer.end());
    stream.EmitRecord(llvm::bitc::IDENTIFICATION_CODE_STRING, name);
    stream.EmitRecord(llvm::bitc::IDENTIFICATION_CODE_EPOCH, llvm::SmallVector<unsigned, 1>{epoch});
    stream.ExitBlock();
    stream.EnterSubblock(llvm::bitc::MODULE_BLOCK_ID, 3);
    stream.EmitRecord(llvm::bitc::MODULE_CODE_VERSION, llvm::SmallVector<unsigned, 1>{99});
    stream.ExitBlock();
  }
  return std::string(buffer.begin(), buffer.end());
}

// IR text the parser rejects.
inline std::string unparsableIr() { return "define i32 @f() {\n  ret i32 %nowhere\n"; }

// IR text that parses but fails the verifier: %x does not dominate its use.
inline std::string unverifiableIr() {
  return "define i32 @f(i1 %c) {\n"
         "entry:\n  br i1 %c, label %a, label %b\n"
         "a:\n  %x = add i32 1, 2\n  br label %b\n"
         "b:\n  ret i32 %x\n}\n";
}

}  // namespace kiln::datasets::testing
