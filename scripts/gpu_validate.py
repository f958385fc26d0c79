#!/usr/bin/env python3
"""Hardware counters beside the simulator's figures, launch by launch.

For each kernel of the given .cu files (default: every fixture and
example), one launch (--grid, --block; pointer parameters get 1 MiB
buffers, filled 0, 1, 2, ... where the element type is known and zeroed
otherwise, integers --int, floats 1.0), run two ways:

* on the GPU: a generated host harness (the file included, its own main
  renamed) built with nvcc and profiled with Nsight Compute (`ncu`);
* in `warpcheck simulate` with the same launch and arguments.

and print a table of the figures both give: global sectors per request,
shared-memory wavefronts, divergent branches and instructions (SASS warp
instructions against the simulator's IR steps, which differ by design:
shown for scale). `--dry-run` needs no GPU, nvcc or ncu: it prints each
launch, the harness and the commands it would run, and the simulator's
figures. `--parse-ncu CSV` prints the hardware figures of an `ncu --csv`
report. Kernels a harness cannot launch (templates, kernels whose
parameters are structs) are listed as skipped with the reason.
"""

import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Nsight Compute metrics (Volta and later) and what they stand for.
METRICS = {
    "sectors": [
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    ],
    "requests": [
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    ],
    "wavefronts": [
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    ],
    "divergent": ["smsp__sass_branch_targets_threads_divergent.sum"],
    "instructions": ["smsp__inst_executed.sum"],
}

BUFFER_BYTES = 1 << 20

# C++ pointee types the simulator fills with 0, 1, 2, ... (`iota`).
ELEMENTS = {
    "char": "i8", "signed char": "i8", "unsigned char": "u8",
    "short": "i16", "unsigned short": "u16", "int": "i32", "unsigned int": "u32",
    "long": "i64", "unsigned long": "u64", "long long": "i64",
    "unsigned long long": "u64", "float": "f32", "double": "f64",
}

INTS = {"char", "signed char", "unsigned char", "short", "unsigned short", "int",
        "unsigned int", "long", "unsigned long", "long long", "unsigned long long",
        "bool", "size_t"}


def params_of(demangled):
    """The parameter types of `f(float const*, int)`, split at top-level commas."""
    inner = demangled[demangled.index("(") + 1:demangled.rindex(")")]
    out, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(inner[start:i].strip())
            start = i + 1
    if inner.strip():
        out.append(inner[start:].strip())
    return out


def base(ty):
    """`float const` -> `float`."""
    return " ".join(w for w in ty.replace("const", " ").replace("volatile", " ").split())


class Launch:
    """One kernel's launch: its arguments for the simulator and the harness."""

    def __init__(self, kernel, grid, block, int_value):
        self.name = kernel["name"]
        self.mangled = kernel["mangled"]
        self.short = self.name[:self.name.index("(")]
        self.grid, self.block = grid, block
        self.sim_args, self.decls, self.call, self.skip = [], [], [], None
        if "<" in self.short or "::" in self.short:
            self.skip = "a template or namespaced kernel: no generic harness"
        for i, ty in enumerate(params_of(self.name)):
            b = base(ty)
            if b.endswith("*"):
                elem = ELEMENTS.get(base(b[:-1]))
                init = "iota" if elem else "zero"
                self.sim_args.append(f"arg{i}=buf:{BUFFER_BYTES}:{init}")
                self.decls.append((i, b, elem))
                self.call.append(f"({ty})arg{i}")
            elif b in INTS:
                self.sim_args.append(f"arg{i}={int_value}")
                self.call.append(f"({ty}){int_value}")
            elif b in ("float", "double"):
                self.sim_args.append(f"arg{i}=1.0")
                self.call.append(f"({ty})1.0")
            else:
                self.skip = f"parameter {i} is a {ty}: no generic value"

    def dims(self, d):
        return ",".join(str(x) for x in d)

    def harness(self, source):
        """A host program that runs this launch once."""
        lines = [
            "#define main warpcheck_fixture_main",
            f'#include "{source}"',
            "#undef main",
            "#include <cstdio>",
            "template <class T> __global__ void warpcheck_iota(T *p, size_t n) {",
            "  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;",
            "  if (i < n) p[i] = (T)i;",
            "}",
            "int main() {",
        ]
        for i, ty, elem in self.decls:
            lines.append(f"  void *arg{i} = nullptr;")
            lines.append(f"  cudaMalloc(&arg{i}, {BUFFER_BYTES});")
            lines.append(f"  cudaMemset(arg{i}, 0, {BUFFER_BYTES});")
            if elem:
                t = base(ty[:-1])
                n = f"{BUFFER_BYTES} / sizeof({t})"
                lines.append(
                    f"  warpcheck_iota<<<({n} + 255) / 256, 256>>>(({t} *)arg{i}, {n});"
                )
        g, b = self.dims(self.grid), self.dims(self.block)
        lines.append(f"  {self.short}<<<dim3({g}), dim3({b})>>>({', '.join(self.call)});")
        lines.append("  cudaError_t e = cudaDeviceSynchronize();")
        lines.append('  if (e != cudaSuccess) { fprintf(stderr, "%s\\n", cudaGetErrorString(e)); return 1; }')
        lines.append("  return 0;")
        lines.append("}")
        return "\n".join(lines) + "\n"


def warpcheck_bin(args):
    return args.warpcheck or os.path.join(ROOT, "target", "release", "warpcheck")


def kernels_of(wc, path):
    out = subprocess.run([wc, "check", "--format", "json", path],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError(out.stderr.strip())
    seen, kernels = set(), []
    for k in json.loads(out.stdout)["kernels"]:
        if k["mangled"] not in seen:
            seen.add(k["mangled"])
            kernels.append(k)
    return kernels


def simulate(wc, path, launch):
    cmd = [wc, "simulate", path, "--kernel", launch.mangled, "--grid",
           launch.dims(launch.grid), "--block", launch.dims(launch.block),
           "--format", "json"]
    for a in launch.sim_args:
        cmd += ["--arg", a]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, (out.stderr.strip().splitlines() or ["failed"])[-1]
    t = json.loads(out.stdout)["totals"]
    return {
        "sectors": t["sectors"], "requests": t["requests"],
        "wavefronts": t["wavefronts"], "divergent": t["divwarps"],
        "instructions": t["steps"],
    }, None


def parse_ncu(text):
    """Per kernel (by name as ncu prints it), each figure summed over its
    metrics, from `ncu --csv` output."""
    start = text.find('"ID"')
    rows = csv.DictReader(io.StringIO(text[start:] if start >= 0 else text))
    per = {}
    for r in rows:
        name, metric = r.get("Kernel Name"), r.get("Metric Name")
        value = (r.get("Metric Value") or "").replace(",", "")
        if not name or not metric:
            continue
        for what, names in METRICS.items():
            if metric in names:
                try:
                    v = float(value)
                except ValueError:
                    continue
                per.setdefault(name, {}).setdefault(what, 0.0)
                per[name][what] += v
    return per


def profile(launch, source, args, work):
    """Builds and profiles the harness; the hardware figures or an error."""
    h = os.path.join(work, "harness.cu")
    exe = os.path.join(work, "harness")
    with open(h, "w") as f:
        f.write(launch.harness(os.path.abspath(source)))
    build = subprocess.run([args.nvcc, f"-arch={args.arch}", "-lineinfo", "-o", exe, h,
                            "-I", os.path.dirname(os.path.abspath(source))],
                           capture_output=True, text=True)
    if build.returncode != 0:
        return None, "nvcc: " + (build.stderr.strip().splitlines() or ["failed"])[-1]
    metrics = ",".join(m for ms in METRICS.values() for m in ms)
    prof = subprocess.run([args.ncu, "--csv", "--metrics", metrics, "--kernel-name",
                           f"regex:^{re.escape(launch.short)}$", exe],
                          capture_output=True, text=True)
    if prof.returncode != 0:
        return None, "ncu: " + (prof.stderr.strip().splitlines() or ["failed"])[-1]
    per = parse_ncu(prof.stdout)
    got = next(iter(per.values()), None)
    return (got, None) if got else (None, "ncu reported no metrics")


def ratio(a, b):
    return f"{a / b:.2f}" if b else "-"


def row(file, launch, hw, sim):
    def pair(what):
        h = "-" if hw is None else f"{hw.get(what, 0):.0f}"
        s = "-" if sim is None else str(sim[what])
        return f"{h} / {s}"
    spr_h = "-" if hw is None else ratio(hw.get("sectors", 0), hw.get("requests", 0))
    spr_s = "-" if sim is None else ratio(sim["sectors"], sim["requests"])
    return (f"| {os.path.basename(file)} | {launch.short} | {spr_h} / {spr_s} | "
            f"{pair('wavefronts')} | {pair('divergent')} | {pair('instructions')} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", help=".cu files (default: the fixtures and examples)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the launches, harnesses, commands and the simulator's figures; no GPU")
    p.add_argument("--parse-ncu", metavar="CSV", help="print the figures of an ncu --csv report")
    p.add_argument("--grid", default="2,1,1")
    p.add_argument("--block", default="256,1,1")
    p.add_argument("--int", type=int, default=128, dest="int_value")
    p.add_argument("--arch", default="sm_80")
    p.add_argument("--warpcheck", help="the warpcheck binary (default: target/release/warpcheck)")
    p.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
    p.add_argument("--ncu", default=shutil.which("ncu") or "ncu")
    args = p.parse_args()

    if args.parse_ncu:
        with open(args.parse_ncu) as f:
            for name, figs in parse_ncu(f.read()).items():
                spr = ratio(figs.get("sectors", 0), figs.get("requests", 0))
                print(f"{name}: sectors/request {spr}, " + ", ".join(
                    f"{k} {v:.0f}" for k, v in sorted(figs.items())))
        return 0

    if not args.dry_run:
        missing = [t for t in (args.nvcc, args.ncu) if not shutil.which(t)]
        gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True) \
            if shutil.which("nvidia-smi") else None
        if missing or gpu is None or gpu.returncode != 0:
            print("gpu-validate: needs a GPU (nvidia-smi), nvcc and ncu; missing: "
                  + ", ".join(missing + ([] if gpu and gpu.returncode == 0 else ["a GPU"]))
                  + " (--dry-run runs without them)", file=sys.stderr)
            return 2
    files = args.files or sorted(
        [os.path.join(ROOT, "tests/fixtures/cu", f)
         for f in os.listdir(os.path.join(ROOT, "tests/fixtures/cu")) if f.endswith(".cu")]
        + [os.path.join(ROOT, "examples", f)
           for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".cu")])
    wc = warpcheck_bin(args)
    grid = [int(x) for x in args.grid.split(",")] + [1] * (3 - len(args.grid.split(",")))
    block = [int(x) for x in args.block.split(",")] + [1] * (3 - len(args.block.split(",")))
    print("| file | kernel | sectors/request (GPU / simulator) | shared wavefronts "
          "| divergent branches | instructions (SASS / IR steps) |")
    print("|---|---|---|---|---|---|")
    skipped = []
    with tempfile.TemporaryDirectory() as work:
        for path in files:
            try:
                kernels = kernels_of(wc, path)
            except RuntimeError as e:
                skipped.append(f"{os.path.basename(path)}: {e}")
                continue
            for k in kernels:
                launch = Launch(k, grid, block, args.int_value)
                if launch.skip:
                    skipped.append(f"{os.path.basename(path)} {launch.short}: {launch.skip}")
                    continue
                sim, why = simulate(wc, path, launch)
                if args.dry_run:
                    print(f"<!-- {launch.short}<<<{launch.dims(grid)}, {launch.dims(block)}>>>"
                          f" simulate --arg {' --arg '.join(launch.sim_args) or '(none)'} -->")
                    hw = None
                else:
                    hw, hwhy = profile(launch, path, args, work)
                    why = why or hwhy
                if why:
                    skipped.append(f"{os.path.basename(path)} {launch.short}: {why}")
                print(row(path, launch, hw, sim))
                if args.dry_run:
                    print("<!-- harness:\n" + launch.harness(os.path.abspath(path)) + "-->")
    for s in skipped:
        print(f"skipped: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
