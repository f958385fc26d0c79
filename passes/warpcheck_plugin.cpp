// The LLVM side of the warpcheck pass plugin. It registers the pass with
// opt and clang and turns findings into LLVM diagnostics; all analysis lives
// in Rust (src/plugin). The entry point llvmGetPassPluginInfo is defined in
// Rust, because a cdylib does not export C++ symbols from static archives.

#include "llvm-c/Types.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <string>

using namespace llvm;

extern "C" {
// Implemented in Rust: analyses the module, calling warpcheck_emit for each
// finding. Never unwinds.
void warpcheck_analyze_module(LLVMModuleRef M);
}

namespace {

// Analysis only: the module is never changed.
struct WarpcheckPass : PassInfoMixin<WarpcheckPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    // Clang runs the pipeline for the host too; only device code matters.
    if (Triple(M.getTargetTriple()).isNVPTX())
      warpcheck_analyze_module(wrap(&M));
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// A note under the warning before it (a hint): a plugin diagnostic of
// note severity, which clang shows as "note:" and hides with the warning
// it follows.
struct WarpcheckNote : DiagnosticInfo {
  std::string Text;
  explicit WarpcheckNote(std::string T)
      : DiagnosticInfo(kind(), DS_Note), Text(std::move(T)) {}
  static int kind() {
    static const int K = getNextAvailablePluginDiagnosticKind();
    return K;
  }
  void print(DiagnosticPrinter &DP) const override { DP << Text; }
};

} // namespace

extern "C" {

// Reports one finding at an instruction (or, without one, at its function).
// InlinedHops says how far to follow the instruction's inlined-at chain to
// reach the user's own source (past wrappers inlined from CUDA headers).
// Severity 0 is a warning (shown by clang as [-Wpass-failed]); 1 is a note;
// 2 an error (a warning the configuration's WarningsAsErrors names); 3 a
// finding an earlier warning already stands for (src/diag/fold.rs). Suffix
// is added to the warning only, and Notes (hints) follow it. Every finding
// is also an analysis remark, for -Rpass-analysis=warpcheck and
// -fsave-optimization-record.
void warpcheck_emit(LLVMValueRef Fn, LLVMValueRef Inst, unsigned InlinedHops,
                    int Severity, const char *Check, const char *Message,
                    const char *Suffix, const char *const *Notes,
                    unsigned NoteCount) {
  auto *F = unwrap<Function>(Fn);
  auto *I = Inst ? unwrap<Instruction>(Inst) : nullptr;
  DILocation *DL = I ? I->getDebugLoc().get() : nullptr;
  for (unsigned K = 0; DL && K < InlinedHops && DL->getInlinedAt(); ++K)
    DL = DL->getInlinedAt();
  DiagnosticLocation Loc = DL ? DiagnosticLocation(DebugLoc(DL))
                              : DiagnosticLocation(F->getSubprogram());
  LLVMContext &Ctx = F->getContext();
  if (Severity == 0 || Severity == 2) {
    std::string Text =
        std::string(Message) + Suffix + " [warpcheck-" + Check + "]";
    if (Severity == 0)
      Ctx.diagnose(DiagnosticInfoOptimizationFailure(*F, Loc, Text));
    else
      Ctx.diagnose(DiagnosticInfoUnsupported(*F, Text, Loc, DS_Error));
    for (unsigned K = 0; K < NoteCount; ++K)
      Ctx.diagnose(WarpcheckNote(Notes[K]));
  }
  const BasicBlock *Region = I ? I->getParent() : &F->getEntryBlock();
  OptimizationRemarkAnalysis Remark("warpcheck", Check, Loc, Region);
  Remark << Message;
  Ctx.diagnose(Remark);
}

// A problem with warpcheck itself, reported without stopping the compile.
// It is attached to the module's first function, the only anchor LLVM
// offers for a warning that clang will show and count.
void warpcheck_emit_module_warning(LLVMModuleRef M, const char *Message) {
  for (Function &F : *unwrap(M)) {
    if (F.isDeclaration())
      continue;
    F.getContext().diagnose(DiagnosticInfoOptimizationFailure(
        F, DiagnosticLocation(F.getSubprogram()), Message));
    return;
  }
  errs() << "warning: " << Message << "\n";
}

void warpcheck_register_callbacks(PassBuilder &PB) {
  // LLVM 20 added the LTO phase to this callback; we run in every phase.
#if LLVM_VERSION_MAJOR >= 20
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) {
        MPM.addPass(WarpcheckPass());
      });
#else
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(WarpcheckPass());
      });
#endif
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM,
         ArrayRef<PassBuilder::PipelineElement>) {
        if (Name != "warpcheck")
          return false;
        MPM.addPass(WarpcheckPass());
        return true;
      });
}

} // extern "C"
