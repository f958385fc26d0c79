#!/usr/bin/env python3
"""Turns an llvm-stress-19 module into an NVPTX kernel module with thread
dependence, for scripts/fuzz-ir.sh.

usage: fuzz-ir-retarget.py SEED < stress.ll > kernel.ll

llvm-stress writes one function `@autogen_SD<n>(ptr %0, ptr %1, ptr %2,
i32 %3, i64 %4, i8 %5)` whose entry block is labelled `BB:` and whose
values are all named. This script, with choices drawn from SEED:

* sets the NVPTX triple and data layout;
* makes the function a kernel, either with the `ptx_kernel` calling
  convention or with an `nvvm.annotations` entry (the two forms the loader
  accepts; clang-19 writes the second);
* reads threadIdx.x at the top of the entry block and mixes it into the
  parameters: uses of %3 become `%3 ^ tid`, uses of %4 `%4 + tid`, uses of
  %0 `&%0[tid]` (each with probability 1/2), and some integer constants of
  i32 arithmetic and compares become tid.

The result is checked by `opt-19 -passes=verify` in the caller.
"""
import random
import re
import sys

DATALAYOUT = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"


def retarget(text: str, rng: random.Random) -> str:
    out = []
    name = None
    in_body = False
    replace = {
        "%3": "%wc.i32" if rng.random() < 0.5 else None,
        "%4": "%wc.i64" if rng.random() < 0.5 else None,
        "%0": "%wc.p0" if rng.random() < 0.5 else None,
    }
    const_share = rng.choice([0.0, 0.1, 0.3])
    use_cc = rng.random() < 0.5
    arith = re.compile(r"^(\s*%\S+ = (?:add|sub|mul|and|or|xor|shl|lshr|icmp \w+) i32 [^,]+, )(-?\d+)$")
    for line in text.splitlines():
        if line.startswith("source_filename"):
            out.append(line)
            out.append(f'target datalayout = "{DATALAYOUT}"')
            out.append('target triple = "nvptx64-nvidia-cuda"')
            continue
        m = re.match(r"define void @(\S+)\(", line)
        if m:
            name = m.group(1)
            if use_cc:
                line = line.replace("define void", "define ptx_kernel void", 1)
            out.append(line)
            continue
        if name and line == "BB:" and not in_body:
            in_body = True
            out.append(line)
            out += [
                "  %wc.tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
                "  %wc.i32 = xor i32 %3, %wc.tid",
                "  %wc.tid64 = zext i32 %wc.tid to i64",
                "  %wc.i64 = add i64 %4, %wc.tid64",
                "  %wc.p0 = getelementptr i32, ptr %0, i64 %wc.tid64",
            ]
            continue
        if in_body and line == "}":
            in_body = False
        if in_body:
            for old, new in replace.items():
                if new:
                    line = re.sub(re.escape(old) + r"(?![\w.])", new, line)
            m = arith.match(line)
            if m and rng.random() < const_share:
                line = m.group(1) + "%wc.tid"
        out.append(line)
    out.append("")
    out.append("declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
    if not use_cc and name:
        out.append("!nvvm.annotations = !{!9000}")
        out.append(f'!9000 = !{{ptr @{name}, !"kernel", i32 1}}')
    return "\n".join(out) + "\n"


def main() -> None:
    seed = int(sys.argv[1])
    sys.stdout.write(retarget(sys.stdin.read(), random.Random(seed)))


if __name__ == "__main__":
    main()
