#!/usr/bin/env python3
"""Copies of NVPTX modules, every defined symbol renamed per copy, until
the copies add up to about MB megabytes of text; writes one .ll per copy
into DIR (for llvm-link-19 to join: it merges the declarations, the
attribute groups and `nvvm.annotations`, which plain concatenation cannot).

usage: bench-memory-gen.py MB DIR BASE.ll...

A copy's defined functions and globals get the suffix `_cN`, so copy N of
kernel `k` is the kernel `k_cN`; declarations (intrinsics, libdevice) keep
their names and are shared. Prints the number of copies and kernels.
"""
import re
import sys

SYMBOL = re.compile(r'@("[^"]+"|[-\w$.]+)')
DEFINE = re.compile(r'^define [^@]*@("[^"]+"|[-\w$.]+)\(', re.M)
GLOBAL = re.compile(r'^@("[^"]+"|[-\w$.]+) = ', re.M)


def renamer(text, suffix):
    """`text` with each symbol it defines renamed by `suffix`."""
    defined = set(DEFINE.findall(text)) | set(GLOBAL.findall(text))
    defined = {d for d in defined if not d.strip('"').startswith('llvm.')}

    def rename(m):
        name = m.group(1)
        if name not in defined:
            return m.group(0)
        if name.startswith('"'):
            return '@"' + name[1:-1] + suffix + '"'
        return '@' + name + suffix

    return SYMBOL.sub(rename, text)


def kernels(text):
    """Kernels a clang-19 module declares in `nvvm.annotations`."""
    return len(re.findall(r'!"kernel", i32 1', text))


def main():
    mb, out, bases = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
    texts = [open(b).read() for b in bases]
    target = mb * 1e6
    written, copies, count = 0, 0, 0
    while written < target:
        text = texts[copies % len(texts)]
        renamed = renamer(text, f"_c{copies}")
        with open(f"{out}/copy{copies:06d}.ll", "w") as f:
            f.write(renamed)
        written += len(renamed)
        count += kernels(text)
        copies += 1
    print(copies, count)


if __name__ == "__main__":
    main()
