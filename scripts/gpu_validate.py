#!/usr/bin/env python3
"""Hardware counters beside the simulator's figures and the static claims.

Every kernel of the given .cu files (default: every fixture and example)
is launched once (--grid, --block; pointer parameters get 1 MiB buffers,
filled 0, 1, 2, ... where the element type is known and zeroed otherwise,
integers --int, floats 1.0) three ways:

* on the GPU: a generated host program per file (the file included, its
  own main renamed, every kernel launched once) built with nvcc and
  profiled with Nsight Compute (`ncu`), per kernel and per source line;
* in `warpcheck simulate`, same launch and arguments, per kernel and line;
* in `warpcheck check --block-dim` (the definite static findings).

The steps can run on two machines, since the GPU machine need not have
warpcheck (or LLVM) and the development machine need not have a GPU:

    gpu_validate.py prepare DIR [FILES]   # here: harnesses, simulator, check
    gpu_validate.py gpu DIR OUT           # there: nvcc + ncu, results in OUT
    gpu_validate.py compare DIR OUT       # here: the tables, contradictions

`prepare --ptx` makes the GPU run clang's code, the code warpcheck reads:
each file's PTX from clang (the flags `check` compiles with), loaded by the
harness through the driver API (`cuModuleLoad`, `cuLaunchKernel`), so that
differences of nvcc's code generation drop out of the comparison.

`all` runs the three in a row where everything exists; `prepare` alone is
the dry run; `parse CSV` prints the figures of an `ncu --csv` report. Kernels a harness cannot launch (templates, extern "C" or
struct parameters) are listed as skipped with the reason.
"""

import argparse
import csv
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUFFER_BYTES = 1 << 20
# Dynamic shared memory every launch gets, for the `extern __shared__` kernels.
SHARED_BYTES = 8192
# Block shapes tried in turn where the default or the host's shape does not
# run in the simulator (a fixed 2-D tile indexed by threadIdx).
FALLBACK_BLOCKS = ([32, 32, 1], [16, 16, 1], [32, 8, 1], [32, 1, 1])

# Nsight Compute metrics (Volta and later), per kernel, and what they stand for.
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
    if inner[start:].strip():
        out.append(inner[start:].strip())
    return [p for p in out if p != "void"]


def base(ty):
    """`float const` -> `float`."""
    return " ".join(w for w in ty.replace("const", " ").replace("volatile", " ").split())


class Launch:
    """One kernel's launch: its arguments for the simulator and the harness."""

    def __init__(self, kernel, grid, block, int_value):
        self.name, self.mangled = kernel["name"], kernel["mangled"]
        self.grid, self.block = grid, block
        if kernel.get("block_dim") and kernel.get("block_dim_source") != "default":
            self.block = list(kernel["block_dim"])
        self.sim_args, self.setup, self.call, self.skip = [], [], [], None
        if "(" not in self.name:
            self.short, self.skip = self.name, "no parameter types in its name (extern \"C\")"
            return
        self.short = self.name[:self.name.index("(")]
        if "<" in self.short or "::" in self.short:
            self.skip = "a template or namespaced kernel: no generic harness"
        for i, ty in enumerate(params_of(self.name)):
            b = base(ty)
            if b.endswith("*"):
                elem = ELEMENTS.get(base(b[:-1]))
                self.sim_args.append(f"arg{i}=buf:{BUFFER_BYTES}:" + (f"iota:{elem}" if elem else "zero"))
                fill = f"wc_iota<{base(b[:-1])}>()" if elem else "wc_zero()"
                self.setup.append(f"void *arg{i} = {fill};")
                self.call.append(f"WcPtr{{arg{i}}}")
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

    def body(self, ptx=False):
        """The statements that run this launch once, in a block of its own:
        nvcc's kernel through `<<<>>>`, or with `ptx` clang's, from the
        module the harness loaded, through the driver API."""
        g, b = self.dims(self.grid), self.dims(self.block)
        frees = " ".join(f"cudaFree(arg{i});" for i in range(len(self.call))
                         if f"void *arg{i} " in " ".join(self.setup))
        if ptx:
            # Every argument an lvalue of the parameter's own type.
            values = [f"    {ty} arg{i} = {value};" for i, (ty, value) in enumerate(self.typed())
                      if ty is not None]
            refs = ", ".join(f"&arg{i}" for i in range(len(self.call)))
            params = f"    void *wc_params[] = {{{refs}}};" if self.call else "    void **wc_params = nullptr;"
            launch = values + [params,
                               f'    wc_launch("{self.mangled}", dim3({g}), dim3({b}), wc_params);']
        else:
            launch = [f"    {self.short}<<<dim3({g}), dim3({b}), {SHARED_BYTES}>>>({', '.join(self.call)});"]
        return (["  {"] + [f"    {s}" for s in self.setup] + launch
                + [f'    wc_sync("{self.short}");', f"    {frees}", "  }"])

    def typed(self):
        """Per parameter, the type and value of a local holding it; (None,
        None) for a pointer, whose `void *argN` is set up already."""
        return [(None, None) if call.startswith("WcPtr") else (base(ty), call)
                for ty, call in zip(params_of(self.name), self.call)]


def harness(source, launches, ptx=None):
    """A host program that runs each launch of one file once; with `ptx`
    (a PTX file's name), the kernels of that module instead of nvcc's."""
    loader = [] if ptx is None else [
        "#include <cuda.h>",
        "static CUmodule wc_module;",
        "static void wc_launch(const char *k, dim3 g, dim3 b, void **params) {",
        "  CUfunction f;",
        "  CUresult r = cuModuleGetFunction(&f, wc_module, k);",
        "  if (r == CUDA_SUCCESS)",
        f"    r = cuLaunchKernel(f, g.x, g.y, g.z, b.x, b.y, b.z, {SHARED_BYTES}, 0, params, nullptr);",
        '  if (r != CUDA_SUCCESS) { const char *s = "?"; cuGetErrorString(r, &s); '
        'fprintf(stderr, "%s: %s\\n", k, s); wc_failed = 1; }',
        "}",
    ]
    load = [] if ptx is None else [
        "  cudaFree(0);  // the runtime's primary context, which the driver calls then use",
        f'  if (cuModuleLoad(&wc_module, "{ptx}") != CUDA_SUCCESS) {{',
        f'    fprintf(stderr, "cannot load {ptx}\\n");',
        "    return 1;",
        "  }",
    ]
    return "\n".join([
        "#include <cassert>",
        "#include <cstdio>",
        "#include <cstdlib>",
        "#define main warpcheck_fixture_main",
        f'#include "{source}"',
        "#undef main",
        "// Converts to whatever pointer the kernel's parameter is.",
        "struct WcPtr { void *p; template <class T> operator T *() const { return (T *)p; } };",
        f"static const size_t WC_BYTES = {BUFFER_BYTES};",
        "static void *wc_zero() {",
        "  void *p = nullptr; cudaMalloc(&p, WC_BYTES); cudaMemset(p, 0, WC_BYTES); return p;",
        "}",
        "template <class T> static void *wc_iota() {",
        "  T *h = (T *)malloc(WC_BYTES);",
        "  for (size_t i = 0; i < WC_BYTES / sizeof(T); ++i) h[i] = (T)i;",
        "  void *p = nullptr; cudaMalloc(&p, WC_BYTES);",
        "  cudaMemcpy(p, h, WC_BYTES, cudaMemcpyHostToDevice); free(h); return p;",
        "}",
        "static int wc_failed = 0;",
        "static void wc_sync(const char *k) {",
        "  cudaError_t e = cudaGetLastError();  // a launch that never started",
        "  if (e == cudaSuccess) e = cudaDeviceSynchronize();",
        '  if (e != cudaSuccess) { fprintf(stderr, "%s: %s\\n", k, cudaGetErrorString(e)); wc_failed = 1; }',
        "}",
    ] + loader + ["int main() {"] + load
        + [line for l in launches for line in l.body(ptx is not None)]
        + ["  return wc_failed;", "}", ""])


def warpcheck(args):
    return args.warpcheck or os.path.join(ROOT, "target", "release", "warpcheck")


def default_files():
    fixtures = os.path.join(ROOT, "tests", "fixtures", "cu")
    examples = os.path.join(ROOT, "examples")
    return sorted([os.path.join(fixtures, f) for f in os.listdir(fixtures) if f.endswith(".cu")]
                  + [os.path.join(examples, f) for f in os.listdir(examples) if f.endswith(".cu")])


def run_json(cmd, ok=(0,)):
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if out.returncode not in ok:
        err = [l for l in out.stderr.splitlines() if "error" in l] or ["failed"]
        raise RuntimeError(err[0].strip())
    return json.loads(out.stdout)


def clang_ptx(args, rel, out):
    """Writes the PTX clang makes of `rel` with the flags `warpcheck check`
    compiles it with (so from the IR warpcheck reads); the reason if not."""
    inc = os.path.join(ROOT, "src", "frontend")
    cmd = [args.clang, "-x", "cuda", "--cuda-device-only", f"--cuda-gpu-arch={args.ptx_arch}",
           "-O2", "-S", "-nocudainc", "-nocudalib", "-Xclang", "-target-feature", "-Xclang",
           "+ptx75", "-include", os.path.join(inc, "warpcheck_cuda.h"), "-isystem",
           os.path.join(inc, "include"), "-o", out, rel]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["failed"])[-1]


def prepare(args):
    """Harnesses, simulator figures and static findings into args.dir."""
    wc, work = warpcheck(args), os.path.abspath(args.dir)
    os.makedirs(work, exist_ok=True)
    grid = [int(x) for x in args.grid.split(",")] + [1] * (3 - len(args.grid.split(",")))
    block = [int(x) for x in args.block.split(",")] + [1] * (3 - len(args.block.split(",")))
    plan = {"grid": grid, "block": block, "files": [], "skipped": [], "ptx": bool(args.ptx)}
    for path in args.files or default_files():
        rel = os.path.relpath(os.path.abspath(path), ROOT)
        try:
            check = run_json([wc, "check", "--format", "json", "--block-dim",
                              ",".join(map(str, block)), rel], ok=(0, 1))
        except (RuntimeError, json.JSONDecodeError) as e:
            plan["skipped"].append(f"{rel}: {e}")
            continue
        seen, launches = set(), []
        for k in check["kernels"]:
            if k["mangled"] in seen:
                continue
            seen.add(k["mangled"])
            launch = Launch(k, grid, block, args.int_value)
            if launch.skip:
                plan["skipped"].append(f"{rel} {launch.short}: {launch.skip}")
            else:
                launches.append(launch)
        if not launches:
            continue
        entry = {"file": rel, "kernels": [], "findings": check.get("findings", [])}
        ran = []
        for l in launches:
            sim, why = None, None
            for shape in [l.block] + [b for b in FALLBACK_BLOCKS if b != l.block]:
                l.block = shape
                cmd = [wc, "simulate", rel, "--kernel", l.short, "--grid", l.dims(grid),
                       "--block", l.dims(shape), "--shared-bytes", str(SHARED_BYTES),
                       "--format", "json"]
                for a in l.sim_args:
                    cmd += ["--arg", a]
                try:
                    sim = run_json(cmd)
                    break
                except (RuntimeError, json.JSONDecodeError) as e:
                    why = why or str(e)
            if sim is None:
                # Not run on the GPU either: a fault there spoils the launches after it.
                plan["skipped"].append(f"{rel} {l.short}: simulate: {why}")
                continue
            ran.append(l)
            entry["kernels"].append({"short": l.short, "mangled": l.mangled, "name": l.name,
                                     "block": l.block, "sim": sim})
        if not ran:
            continue
        stem = re.sub(r"[^A-Za-z0-9]+", "_", rel)
        entry["harness"] = f"{stem}.cu"
        ptx = None
        if args.ptx:
            ptx = f"{stem}.ptx"
            why = clang_ptx(args, rel, os.path.join(work, ptx))
            if why:
                plan["skipped"].append(f"{rel}: clang's PTX: {why}")
                continue
            entry["ptx"] = ptx
        with open(os.path.join(work, entry["harness"]), "w") as f:
            f.write(harness(os.path.relpath(os.path.join(ROOT, rel), work), ran, ptx))
        plan["files"].append(entry)
    with open(os.path.join(work, "plan.json"), "w") as f:
        json.dump(plan, f)
    n = sum(len(e["kernels"]) for e in plan["files"])
    print(f"prepared {n} launches in {len(plan['files'])} programs under {args.dir}; "
          f"{len(plan['skipped'])} skipped")
    return 0


def gpu(args):
    """Builds each harness and profiles it: per-kernel metrics and per-line
    source counters, raw, into args.out (parsed later by `compare`)."""
    work, out = os.path.abspath(args.dir), os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(work, "plan.json")) as f:
        plan = json.load(f)
    log = open(os.path.join(out, "gpu-log.txt"), "w")

    def build(entry):
        src = os.path.join(work, entry["harness"])
        exe = src[:-3]
        driver = ["-lcuda"] if entry.get("ptx") else []
        r = subprocess.run([args.nvcc, f"-arch={args.arch}", "-lineinfo", "-O3", "-o", exe, src,
                            "-I", os.path.dirname(os.path.join(ROOT, entry["file"]))] + driver,
                           capture_output=True, text=True, cwd=work)
        return entry, exe, r

    start, results = time.time(), {}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        built = list(pool.map(build, plan["files"]))
    log.write(f"built {len(built)} harnesses in {time.time() - start:.0f} s\n")
    metrics = ",".join(m for ms in METRICS.values() for m in ms)
    for entry, exe, r in built:
        name = entry["harness"]
        res = results.setdefault(name, {})
        if r.returncode != 0:
            res["error"] = "nvcc: " + r.stderr[-2000:]
            continue
        if time.time() - start > args.budget:
            res["error"] = "not profiled: the time budget ran out"
            continue
        rep = exe + "-rep"
        prof = subprocess.run([args.ncu, "-f", "-o", rep, "--metrics", metrics, "--section",
                               "SourceCounters", "--import-source", "yes", "--print-kernel-base",
                               "mangled", exe], capture_output=True, text=True, cwd=work)
        res["profile_rc"], res["profile_err"] = prof.returncode, prof.stderr[-3000:]
        res["program_out"] = prof.stdout[-3000:]
        if not os.path.exists(rep + ".ncu-rep"):
            continue
        raw = subprocess.run([args.ncu, "-i", rep + ".ncu-rep", "--csv", "--page", "raw",
                              "--print-kernel-base", "mangled", "--metrics", metrics],
                             capture_output=True, text=True)
        res["raw"] = raw.stdout
        for view in ("cuda", "sass"):
            src = subprocess.run([args.ncu, "-i", rep + ".ncu-rep", "--csv", "--page", "source",
                                  "--print-source", view, "--print-kernel-base", "mangled"],
                                 capture_output=True, text=True)
            res["source"] = {"view": view, "rc": src.returncode, "out": src.stdout,
                             "err": src.stderr[-1000:]}
            if src.returncode == 0 and src.stdout.strip():
                break
        log.write(f"{name}: profiled at {time.time() - start:.0f} s\n")
        log.flush()
    with gzip.open(os.path.join(out, "gpu.json.gz"), "wt") as f:
        json.dump(results, f)
    log.write(f"done in {time.time() - start:.0f} s\n")
    return 0


def parse_metrics(text):
    """Per kernel, each figure summed over its metrics, from `ncu --csv`
    output in either layout: a row per metric (`Metric Name`, `Metric
    Value`, as a profiling run prints it) or a row per kernel with a column
    per metric (`--page raw`)."""
    start = text.find('"ID"')
    rows = list(csv.DictReader(io.StringIO(text[start:] if start >= 0 else text)))
    if not rows or "Metric Name" not in rows[0]:
        return parse_raw(text)
    per = {}
    for r in rows:
        name, metric = r.get("Kernel Name"), r.get("Metric Name")
        for what, names in METRICS.items():
            if name and metric in names:
                try:
                    v = float((r.get("Metric Value") or "").replace(",", ""))
                except ValueError:
                    continue
                per.setdefault(name, {}).setdefault(what, 0.0)
                per[name][what] += v
    return per


def parse(args):
    with open(args.csv) as f:
        for name, figs in parse_metrics(f.read()).items():
            spr = f"{figs['sectors'] / figs['requests']:.2f}" if figs.get("requests") else "-"
            print(f"{name}: sectors/request {spr}, " + ", ".join(
                f"{k} {v:.0f}" for k, v in sorted(figs.items())))
    return 0


def parse_raw(text):
    """Per kernel (mangled), each figure summed over its metrics, from an
    `ncu --csv --page raw` table (one row per kernel, a column per metric)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return {}
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    head, per = rows[0], {}
    for r in rows[1:]:
        if len(r) != len(head) or not r[0].isdigit():
            continue
        rec = dict(zip(head, r))
        figs = per.setdefault(rec.get("Kernel Name", "?"), {})
        for what, names in METRICS.items():
            for m in names:
                try:
                    v = float(rec.get(m, "").replace(",", ""))
                except ValueError:
                    continue
                if v == v:  # not NaN (a metric the device left empty)
                    figs[what] = figs.get(what, 0.0) + v
    return per


# Source-page columns (by the words in their titles) and what they count.
SOURCE_COLUMNS = {
    "sectors": ("l2 theoretical sectors global", "excessive", "ideal"),
    "ideal_sectors": ("l2 theoretical sectors global ideal",),
    "wavefronts": ("l1 wavefronts shared", "ideal", "excessive"),
    "ideal_wavefronts": ("l1 wavefronts shared ideal",),
    "divergent": ("divergent branches",),
}


def parse_source(text, kernel):
    """Per source line, the counters of an `ncu --page source --print-source
    cuda --csv` table: {line: {figure: value}}."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"#"')
                  or l.startswith('"Line"') or l.startswith('"# Address"')), None)
    if start is None:
        return {}
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    head = [h.lower() for h in rows[0]]
    cols = {}
    for what, (want, *unwanted) in SOURCE_COLUMNS.items():
        for i, h in enumerate(head):
            if want in h and not any(u in h for u in unwanted):
                cols[what] = i
                break
    per = {}
    for r in rows[1:]:
        if not r or not r[0].strip().isdigit():
            continue
        figs = {}
        for what, i in cols.items():
            try:
                figs[what] = float(r[i].replace(",", ""))
            except (ValueError, IndexError):
                pass
        per[int(r[0])] = figs
    return per


def sim_lines(sim):
    """Per source line of the kernel's own file, the simulator's counters."""
    per = {}
    for s in sim.get("sites", []):
        f = per.setdefault(s.get("line", 0), {})
        if s["kind"] == "branch":
            f["divergent"] = f.get("divergent", 0) + s.get("divergent", 0)
        else:
            for k in ("sectors", "ideal_sectors", "wavefronts", "requests"):
                if isinstance(s.get(k), (int, float)):
                    f[k] = f.get(k, 0) + s[k]
    return per


def compare(args):
    work, out = os.path.abspath(args.dir), os.path.abspath(args.out)
    with open(os.path.join(work, "plan.json")) as f:
        plan = json.load(f)
    with gzip.open(os.path.join(out, "gpu.json.gz"), "rt") as f:
        gpu_res = json.load(f)
    print("| file | kernel | global sectors (GPU / sim) | requests | shared wavefronts "
          "| divergent branches | SASS / IR instructions |")
    print("|---|---|---|---|---|---|---|")
    notes, agree, kernels = [], {"sectors": 0, "requests": 0, "wavefronts": 0}, 0
    for entry in plan["files"]:
        res = gpu_res.get(entry["harness"], {})
        if "error" in res:
            notes.append(f"{entry['file']}: {res['error'].strip().splitlines()[-1] if res['error'].strip() else 'failed'}")
            continue
        hw_all = parse_metrics(res.get("raw", ""))
        for k in entry["kernels"]:
            hw, sim = hw_all.get(k["mangled"]), k["sim"]
            if hw is None or sim is None:
                notes.append(f"{entry['file']} {k['short']}: "
                             + ("no GPU figures" if hw is None else "no simulator figures"))
                continue
            kernels += 1
            t = sim["totals"]
            for what in agree:
                agree[what] += int(round(hw.get(what, 0)) == t[what])

            def pair(h, s):
                return f"{h:.0f} / {s}" + ("" if round(h) == s else " ≠")
            print(f"| {os.path.basename(entry['file'])} | {k['short']} "
                  f"| {pair(hw.get('sectors', 0), t['sectors'])} "
                  f"| {pair(hw.get('requests', 0), t['requests'])} "
                  f"| {pair(hw.get('wavefronts', 0), t['wavefronts'])} "
                  f"| {pair(hw.get('divergent', 0), t['divwarps'])} "
                  f"| {hw.get('instructions', 0):.0f} / {t['steps']} |")
            lines_hw = parse_source(res.get("source", {}).get("out", ""), k["mangled"])
            for line, s in sorted(sim_lines(sim).items()):
                h = lines_hw.get(line)
                if h is None:
                    continue
                for what in ("sectors", "wavefronts"):
                    if what in s and what in h and round(h[what]) != s[what]:
                        notes.append(f"{entry['file']}:{line} {k['short']}: {what} GPU "
                                     f"{h[what]:.0f}, simulator {s[what]}")
    print()
    print(f"{kernels} kernels compared; global sectors equal in {agree['sectors']}, "
          f"requests in {agree['requests']}, shared wavefronts in {agree['wavefronts']}.")
    for s in plan["skipped"]:
        print(f"skipped: {s}")
    for n in notes:
        print(f"note: {n}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="step", required=True)
    sub.add_parser("parse", help="the figures of an `ncu --csv` report").add_argument("csv")
    steps = {n: sub.add_parser(n) for n in ("prepare", "gpu", "compare", "all")}
    for name, s in steps.items():
        s.add_argument("dir")
        if name in ("gpu", "compare", "all"):
            s.add_argument("out")
        if name in ("prepare", "all"):
            s.add_argument("files", nargs="*")
            s.add_argument("--grid", default="2,1,1")
            s.add_argument("--block", default="256,1,1")
            s.add_argument("--int", type=int, default=128, dest="int_value")
            s.add_argument("--warpcheck", help="default: target/release/warpcheck")
            s.add_argument("--ptx", action="store_true",
                           help="run clang's PTX of each file (the code warpcheck reads), "
                                "loaded through the driver API, instead of nvcc's kernels")
            s.add_argument("--clang", default=os.environ.get("WARPCHECK_CLANG", "clang-19"))
            s.add_argument("--ptx-arch", default="sm_80",
                           help="the GPU architecture clang compiles for (check's default)")
        if name in ("gpu", "all"):
            s.add_argument("--arch", default="sm_90")
            s.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
            s.add_argument("--ncu", default=shutil.which("ncu") or "ncu")
            s.add_argument("--budget", type=float, default=420,
                           help="seconds after which no further program is profiled")
    args = p.parse_args()
    if args.step in ("gpu", "all"):
        missing = [t for t in (args.nvcc, args.ncu) if not shutil.which(t)]
        if missing:
            print("gpu-validate: needs nvcc and ncu on the PATH; missing: " + ", ".join(missing),
                  file=sys.stderr)
            return 2
    if args.step == "parse":
        return parse(args)
    if args.step == "prepare":
        return prepare(args)
    if args.step == "gpu":
        return gpu(args)
    if args.step == "compare":
        return compare(args)
    return prepare(args) or gpu(args) or compare(args)


if __name__ == "__main__":
    sys.exit(main())
