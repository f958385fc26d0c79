#!/usr/bin/env python3
"""Writes a synthetic NVPTX module for scripts/bench-taint.sh.

usage: bench-taint-gen.py FUNCTIONS KERNELS > module.ll

Each device function @f<k>(i32 %x, i32 %y, ptr %p) has a branch diamond
with a phi, a loop whose bound is its parameter %x (so the exit is
thread-dependent in some calling contexts and not in others), a branch in
the loop, per-thread (local) array traffic, global loads and stores, and
calls to two later functions (every 16th also calls itself, for recursion).
Kernels call the first functions with threadIdx.x, blockIdx.x and a
parameter in different positions, so functions are reached in several
contexts. About 100 instructions per function.
"""

import sys


def arith_chain(prefix, start, other, n):
    """n dependent arithmetic instructions; returns (lines, last value)."""
    ops = ["add", "mul", "xor", "sub", "and", "or", "shl"]
    lines, cur = [], start
    for j in range(n):
        name = f"%{prefix}{j}"
        operand = other if j % 3 == 0 else str(j + 3)
        if ops[j % len(ops)] == "shl":
            operand = str(j % 5 + 1)
        lines.append(f"  {name} = {ops[j % len(ops)]} i32 {cur}, {operand}")
        cur = name
    return lines, cur


def device_function(k, count):
    callees = [c for c in (k + 1, k + 7) if c < count]
    if k % 16 == 5:
        callees.append(k)  # recursion
    out = [f"define i32 @f{k}(i32 %x, i32 %y, ptr %p) #0 {{", "entry:"]
    out.append("  %arr = alloca [8 x i32], align 4")
    if k % 4 == 0:
        out.append("  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
        out.append("  %y2 = add i32 %y, %tid")
    else:
        out.append("  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()")
        out.append("  %y2 = add i32 %y, %cta")
    out.append("  %c0 = icmp slt i32 %x, %y2")
    out.append("  br i1 %c0, label %then, label %else")
    out.append("then:")
    body, t_last = arith_chain("t", "%x", "%y2", 15)
    out += body
    out.append("  br label %join")
    out.append("else:")
    body, e_last = arith_chain("e", "%y2", "%x", 15)
    out += body
    out.append("  br label %join")
    out.append("join:")
    out.append(f"  %m = phi i32 [ {t_last}, %then ], [ {e_last}, %else ]")
    out.append("  %bound = and i32 %x, 63")
    out.append("  br label %loop")
    out.append("loop:")
    out.append("  %i = phi i32 [ 0, %join ], [ %i.next, %latch ]")
    out.append("  %acc = phi i32 [ %m, %join ], [ %acc.next, %latch ]")
    out.append("  %gidx = zext i32 %i to i64")
    out.append("  %gep = getelementptr inbounds i32, ptr %p, i64 %gidx")
    out.append("  %ld = load i32, ptr %gep, align 4")
    body, l_last = arith_chain("l", "%ld", "%acc", 16)
    out += body
    out.append("  %idx = and i32 %i, 7")
    out.append("  %lidx = zext i32 %idx to i64")
    out.append("  %la = getelementptr inbounds [8 x i32], ptr %arr, i64 0, i64 %lidx")
    out.append(f"  store i32 {l_last}, ptr %la, align 4")
    out.append(f"  %cond = icmp slt i32 %ld, {l_last}")
    out.append("  br i1 %cond, label %inner, label %latch")
    out.append("inner:")
    if callees:
        out.append(f"  %r = call i32 @f{callees[0]}(i32 %acc, i32 %i, ptr %p)")
    else:
        out.append("  %r = add i32 %acc, %i")
    out.append("  br label %latch")
    out.append("latch:")
    out.append(f"  %acc.next = phi i32 [ %r, %inner ], [ {l_last}, %loop ]")
    out.append("  %i.next = add nuw nsw i32 %i, 1")
    out.append("  %more = icmp ult i32 %i.next, %bound")
    out.append("  br i1 %more, label %loop, label %exit")
    out.append("exit:")
    out.append("  %sidx = and i32 %acc.next, 7")
    out.append("  %slidx = zext i32 %sidx to i64")
    out.append("  %sa = getelementptr inbounds [8 x i32], ptr %arr, i64 0, i64 %slidx")
    out.append("  %back = load i32, ptr %sa, align 4")
    body, x_last = arith_chain("x", "%back", "%i.next", 17)
    out += body
    for n, c in enumerate(callees[1:]):
        out.append(f"  %q{n} = call i32 @f{c}(i32 {x_last}, i32 %y, ptr %p)")
        out.append(f"  %z{n} = add i32 %q{n}, {x_last}")
        x_last = f"%z{n}"
    out.append("  %oidx = zext i32 %y to i64")
    out.append("  %og = getelementptr inbounds i32, ptr %p, i64 %oidx")
    out.append(f"  store i32 {x_last}, ptr %og, align 4")
    out.append(f"  ret i32 {x_last}")
    out.append("}")
    return out


def kernel(n):
    out = [f"define void @k{n}(ptr %p, i32 %n) #1 {{", "entry:"]
    out.append("  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
    out.append("  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()")
    args = [("%tid", "%cta"), ("%cta", "%n"), ("%n", "%tid"), ("%cta", "%cta")]
    for j in range(4):
        a, b = args[(n + j) % len(args)]
        out.append(f"  %r{j} = call i32 @f{(n * 3 + j) % 8}(i32 {a}, i32 {b}, ptr %p)")
    out.append("  ret void")
    out.append("}")
    return out


def main():
    count, kernels = int(sys.argv[1]), int(sys.argv[2])
    lines = [
        'target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"',
        'target triple = "nvptx64-nvidia-cuda"',
        "",
    ]
    for k in range(count):
        lines += device_function(k, count)
        lines.append("")
    for n in range(kernels):
        lines += kernel(n)
        lines.append("")
    lines.append("declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
    lines.append("declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()")
    lines.append("attributes #0 = { noinline }")
    lines.append('attributes #1 = { "nvvm.kernel" }')
    lines.append("")
    lines.append("!nvvm.annotations = !{" + ", ".join(f"!{n}" for n in range(kernels)) + "}")
    for n in range(kernels):
        lines.append(f'!{n} = !{{ptr @k{n}, !"kernel", i32 1}}')
    print("\n".join(lines))


if __name__ == "__main__":
    main()
