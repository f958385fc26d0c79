// The clang side of warpcheck's launch shapes: a frontend plugin action
// that reads the `<<<grid, block, shmem>>>` launches of a CUDA file from
// its AST during the device compile, where the host code is parsed but
// never emitted. It is a library of its own, libwarpcheck-frontend.so
// (loaded with -fplugin), because clang's libraries must not be loaded into
// opt with the pass plugin. The pass plugin asks it for the launches
// (warpcheck_frontend_launches, found with dlsym: clang loads plugins with
// RTLD_GLOBAL); `check` reads them from the file WARPCHECK_LAUNCHES_OUT
// names. Either way nothing compiles the host side a second time.
//
// A launch's extents are read where the source fixes them: constants and
// constant expressions, `dim3(16, 16)`, and local variables that are
// initialised once and never written again (`dim3 block(16, 16);`,
// `int threads = 128;`). Anything else is unknown, as in ir::launch.
//
// One line per launch (crates/core/src/ir/launch.rs parses it):
//   kernel<TAB>grid<TAB>block<TAB>shmem<TAB>file<TAB>line<TAB>offsets
// where grid and block are `x,y,z` or `-`, shmem a number or `-`, kernel
// the device symbol of the kernel launched, and offsets one entry per
// kernel argument, comma-separated: the constant byte offset the host adds
// to a pointer it passes (`p + 1` of floats: 4; `p`: 0), or `-`.

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

using namespace clang;

namespace {

// The launches of the last device compile in this process, by main file.
std::mutex RecordedLock;
std::string RecordedFile;
std::string RecordedText;

using Dims = std::array<uint64_t, 3>;

// Reads launch extents out of expressions, following locals that are
// written only by their initialiser.
class Evaluator {
public:
  explicit Evaluator(ASTContext &Ctx) : Ctx(Ctx) {}

  std::optional<uint64_t> integer(const Expr *E, int Depth = 0) {
    if (!E || Depth > 16)
      return std::nullopt;
    if (E->isValueDependent() || E->isTypeDependent())
      return std::nullopt;
    Expr::EvalResult R;
    if (E->EvaluateAsInt(R, Ctx)) {
      const llvm::APSInt &V = R.Val.getInt();
      if (V.isSigned() && V.isNegative())
        return std::nullopt;
      return V.getLimitedValue();
    }
    E = E->IgnoreParenImpCasts();
    if (auto *D = dyn_cast<CXXDefaultArgExpr>(E))
      return integer(D->getExpr(), Depth + 1);
    if (auto *C = dyn_cast<CastExpr>(E))
      return integer(C->getSubExpr(), Depth + 1);
    if (const VarDecl *V = readOnlyLocal(E))
      return integer(V->getInit(), Depth + 1);
    if (auto *B = dyn_cast<BinaryOperator>(E)) {
      auto L = integer(B->getLHS(), Depth + 1);
      auto Rr = integer(B->getRHS(), Depth + 1);
      if (!L || !Rr)
        return std::nullopt;
      switch (B->getOpcode()) {
      case BO_Add:
        return *L + *Rr;
      case BO_Sub:
        return *L >= *Rr ? std::optional<uint64_t>(*L - *Rr) : std::nullopt;
      case BO_Mul:
        return *L * *Rr;
      case BO_Div:
        return *Rr ? std::optional<uint64_t>(*L / *Rr) : std::nullopt;
      case BO_Rem:
        return *Rr ? std::optional<uint64_t>(*L % *Rr) : std::nullopt;
      case BO_Shl:
        return *Rr < 64 ? std::optional<uint64_t>(*L << *Rr) : std::nullopt;
      case BO_Shr:
        return *Rr < 64 ? std::optional<uint64_t>(*L >> *Rr) : std::nullopt;
      default:
        return std::nullopt;
      }
    }
    if (auto *C = dyn_cast<ConditionalOperator>(E)) {
      auto Cond = integer(C->getCond(), Depth + 1);
      if (!Cond)
        return std::nullopt;
      return integer(*Cond ? C->getTrueExpr() : C->getFalseExpr(), Depth + 1);
    }
    return std::nullopt;
  }

  // A `dim3` (or an integer converted to one).
  std::optional<Dims> dims(const Expr *E, int Depth = 0) {
    if (!E || Depth > 16)
      return std::nullopt;
    E = E->IgnoreImplicit()->IgnoreParens();
    if (auto *C = dyn_cast<CXXConstructExpr>(E)) {
      const CXXConstructorDecl *Ctor = C->getConstructor();
      if (Ctor && Ctor->isCopyOrMoveConstructor() && C->getNumArgs() >= 1)
        return dims(C->getArg(0), Depth + 1);
      if (C->getNumArgs() == 1) {
        // dim3(uint3) or a converting constructor of one integer.
        const Expr *A = C->getArg(0)->IgnoreImplicit();
        if (!A->getType()->isIntegralOrEnumerationType())
          return dims(A, Depth + 1);
      }
      Dims D = {1, 1, 1};
      for (unsigned I = 0; I < C->getNumArgs() && I < 3; ++I) {
        auto V = integer(C->getArg(I), Depth + 1);
        if (!V)
          return std::nullopt;
        D[I] = *V;
      }
      return D;
    }
    if (auto *C = dyn_cast<CastExpr>(E))
      return dims(C->getSubExpr(), Depth + 1);
    if (auto *L = dyn_cast<InitListExpr>(E)) {
      Dims D = {1, 1, 1};
      for (unsigned I = 0; I < L->getNumInits() && I < 3; ++I) {
        auto V = integer(L->getInit(I), Depth + 1);
        if (!V)
          return std::nullopt;
        D[I] = *V;
      }
      return D;
    }
    if (const VarDecl *V = readOnlyLocal(E))
      return dims(V->getInit(), Depth + 1);
    if (auto V = integer(E, Depth + 1))
      return Dims{*V, 1, 1};
    return std::nullopt;
  }

  // The constant byte offset a pointer argument adds to a pointer the host
  // keeps (a variable, a parameter, a member, a call's result): `p + 2`,
  // `&p[2]`, casts of those. As ir::launch reads it from host IR.
  std::optional<int64_t> pointerOffset(const Expr *E, int Depth = 0) {
    if (!E || Depth > 16 || !E->getType()->isPointerType())
      return std::nullopt;
    E = E->IgnoreParens();
    if (auto *C = dyn_cast<ImplicitCastExpr>(E)) {
      // An array decaying to a pointer is a local array, not a pointer
      // the host keeps.
      if (C->getCastKind() == CK_ArrayToPointerDecay)
        return std::nullopt;
      return pointerOffset(C->getSubExpr(), Depth + 1);
    }
    if (auto *C = dyn_cast<ExplicitCastExpr>(E))
      return C->getSubExpr()->getType()->isPointerType()
                 ? pointerOffset(C->getSubExpr(), Depth + 1)
                 : std::nullopt;
    if (isa<DeclRefExpr>(E) || isa<MemberExpr>(E) || isa<CallExpr>(E))
      return 0;
    auto Scaled = [&](const Expr *Ptr, const Expr *Index,
                      int Sign) -> std::optional<int64_t> {
      auto Base = pointerOffset(Ptr, Depth + 1);
      Expr::EvalResult R;
      const auto *PT = Ptr->getType()->getAs<PointerType>();
      if (!Base || !PT || PT->getPointeeType()->isIncompleteType() ||
          !Index->EvaluateAsInt(R, Ctx))
        return std::nullopt;
      int64_t Size =
          Ctx.getTypeSizeInChars(PT->getPointeeType()).getQuantity();
      return *Base + Sign * R.Val.getInt().getExtValue() * Size;
    };
    if (auto *B = dyn_cast<BinaryOperator>(E)) {
      const Expr *L = B->getLHS(), *R = B->getRHS();
      if (B->getOpcode() == BO_Add && L->getType()->isPointerType())
        return Scaled(L, R, 1);
      if (B->getOpcode() == BO_Add && R->getType()->isPointerType())
        return Scaled(R, L, 1);
      if (B->getOpcode() == BO_Sub && L->getType()->isPointerType() &&
          R->getType()->isIntegerType())
        return Scaled(L, R, -1);
      return std::nullopt;
    }
    if (auto *U = dyn_cast<UnaryOperator>(E)) {
      if (U->getOpcode() != UO_AddrOf)
        return std::nullopt;
      auto *A = dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens());
      if (!A || !A->getBase()->getType()->isPointerType())
        return std::nullopt;
      return Scaled(A->getBase(), A->getIdx(), 1);
    }
    return std::nullopt;
  }

private:
  ASTContext &Ctx;

  // The local variable `E` names, if its initialiser is its only write.
  const VarDecl *readOnlyLocal(const Expr *E) {
    auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    if (!Ref)
      return nullptr;
    auto *V = dyn_cast<VarDecl>(Ref->getDecl());
    if (!V || !V->hasLocalStorage() || !V->hasInit() || isa<ParmVarDecl>(V) ||
        V->getType()->isReferenceType() ||
        V->getType().isVolatileQualified())
      return nullptr;
    if (V->getType().isConstQualified())
      return V;
    const Stmt *Body = enclosingBody(V);
    return Body && onlyRead(V, Body) ? V : nullptr;
  }

  const Stmt *enclosingBody(const VarDecl *V) {
    const DeclContext *DC = V->getParentFunctionOrMethod();
    auto *F = dyn_cast_or_null<FunctionDecl>(DC);
    return F ? F->getBody() : nullptr;
  }

  // Every use of V in Body reads it: it is converted to a value, read
  // through a member, or copied by a copy constructor.
  bool onlyRead(const VarDecl *V, const Stmt *Body) {
    struct Uses : RecursiveASTVisitor<Uses> {
      const VarDecl *V;
      std::vector<const DeclRefExpr *> Found;
      bool VisitDeclRefExpr(DeclRefExpr *R) {
        if (R->getDecl() == V)
          Found.push_back(R);
        return true;
      }
    } U;
    U.V = V;
    U.TraverseStmt(const_cast<Stmt *>(Body));
    for (const DeclRefExpr *R : U.Found)
      if (!isRead(R))
        return false;
    return true;
  }

  bool isRead(const Expr *E) {
    for (int Hops = 0; Hops < 8; ++Hops) {
      auto Parents = Ctx.getParents(*E);
      if (Parents.size() != 1)
        return false;
      const Expr *P = Parents[0].get<Expr>();
      if (!P)
        return false;
      if (auto *C = dyn_cast<ImplicitCastExpr>(P)) {
        if (C->getCastKind() == CK_LValueToRValue)
          return true;
        if (C->getCastKind() != CK_NoOp)
          return false;
      } else if (auto *C = dyn_cast<CXXConstructExpr>(P)) {
        const CXXConstructorDecl *Ctor = C->getConstructor();
        return Ctor && Ctor->isCopyConstructor() &&
               Ctor->getParamDecl(0)->getType()->getPointeeType().isConstQualified();
      } else if (auto *M = dyn_cast<MemberExpr>(P)) {
        if (M->isArrow())
          return false;
      } else if (!isa<ParenExpr>(P)) {
        return false;
      }
      E = P;
    }
    return false;
  }
};

class LaunchVisitor : public RecursiveASTVisitor<LaunchVisitor> {
public:
  LaunchVisitor(ASTContext &Ctx) : Ctx(Ctx), Names(Ctx), Eval(Ctx) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
    const FunctionDecl *Kernel = E->getDirectCallee();
    const CallExpr *Config = E->getConfig();
    if (!Kernel || !Config || Config->getNumArgs() < 2 ||
        E->isValueDependent() || E->isTypeDependent())
      return true;
    std::string Line = Names.getName(Kernel) + "\t";
    auto Write = [&](std::optional<Dims> D) {
      if (D)
        Line += std::to_string((*D)[0]) + "," + std::to_string((*D)[1]) + "," +
                std::to_string((*D)[2]);
      else
        Line += "-";
      Line += "\t";
    };
    Write(Eval.dims(Config->getArg(0)));
    Write(Eval.dims(Config->getArg(1)));
    std::optional<uint64_t> Shared =
        Config->getNumArgs() > 2 ? Eval.integer(Config->getArg(2))
                                 : std::optional<uint64_t>(0);
    Line += Shared ? std::to_string(*Shared) : std::string("-");
    const SourceManager &SM = Ctx.getSourceManager();
    PresumedLoc P = SM.getPresumedLoc(SM.getExpansionLoc(E->getBeginLoc()));
    if (P.isValid())
      Line += std::string("\t") + P.getFilename() + "\t" +
              std::to_string(P.getLine());
    else
      Line += "\t\t0";
    Line += "\t";
    for (unsigned I = 0; I < E->getNumArgs(); ++I) {
      if (I)
        Line += ",";
      auto Off = Eval.pointerOffset(E->getArg(I));
      Line += Off ? std::to_string(*Off) : std::string("-");
    }
    Text += Line + "\n";
    return true;
  }

  std::string Text;

private:
  ASTContext &Ctx;
  ASTNameGenerator Names;
  Evaluator Eval;
};

class LaunchConsumer : public ASTConsumer {
public:
  void HandleTranslationUnit(ASTContext &Ctx) override {
    LaunchVisitor V(Ctx);
    V.TraverseDecl(Ctx.getTranslationUnitDecl());
    const SourceManager &SM = Ctx.getSourceManager();
    std::string Main;
    if (auto F = SM.getFileEntryRefForID(SM.getMainFileID()))
      Main = F->getName().str();
    {
      std::lock_guard<std::mutex> G(RecordedLock);
      RecordedFile = Main;
      RecordedText = V.Text;
    }
    if (const char *Out = std::getenv("WARPCHECK_LAUNCHES_OUT")) {
      if (FILE *F = std::fopen(Out, "w")) {
        std::fputs(V.Text.c_str(), F);
        std::fclose(F);
      }
    }
  }
};

// Runs in every compile that loads the library with -fplugin, before the
// main action; only the device side of a CUDA compile reads launches.
class LaunchAction : public PluginASTAction {
protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 llvm::StringRef) override {
    if (!CI.getLangOpts().CUDA || !CI.getLangOpts().CUDAIsDevice)
      return std::make_unique<ASTConsumer>();
    return std::make_unique<LaunchConsumer>();
  }
  bool ParseArgs(const CompilerInstance &,
                 const std::vector<std::string> &) override {
    return true;
  }
  ActionType getActionType() override { return AddBeforeMainAction; }
};

} // namespace

static FrontendPluginRegistry::Add<LaunchAction>
    Registered("warpcheck-launches",
               "read CUDA kernel launches for warpcheck's block shapes");

extern "C" {

// The launches this process read from `MainFile`'s AST, as text (see the
// top of this file), or null when its device compile read none (another
// file was compiled last). Valid until the next device compile.
__attribute__((visibility("default"))) const char *
warpcheck_frontend_launches(const char *MainFile) {
  std::lock_guard<std::mutex> G(RecordedLock);
  if (!MainFile || RecordedFile != MainFile)
    return nullptr;
  return RecordedText.c_str();
}

} // extern "C"
