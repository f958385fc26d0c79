#!/usr/bin/env python3
"""Helpers of scripts/suites.sh (public CUDA suites through warpcheck).

usage:
  suites.py checkout GIT_DIR DEST     files of GIT_DIR's HEAD into DEST
  suites.py plan NAME SUITE_DIR       translation units and their flags (TSV)
  suites.py report OUT                per-benchmark table from OUT/results

`checkout` exists because the mirrors `fetch` makes may lack their largest
blobs, which makes `git archive` stop; it writes every blob that is present
and counts the others.

`plan` prints one line per .cu file: bench, role (`tu`, or `included` when
another file of the benchmark #includes it, as Rodinia's bfs.cu includes
kernel.cu: compiling it alone would count its kernels twice or fail), the
path in the suite, the output stem, and the clang flags (-I, -D) separated
by spaces.

`report` reads what suites.sh recorded for each IR file and command and
writes OUT/report.{md,json,tsv}, printing the markdown.
"""

import fnmatch
import glob
import gzip
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

# Where each suite keeps its benchmarks (each `*` is one component of the
# benchmark's name), its shared headers, and headers a benchmark takes from
# beside it (globs relative to the benchmark: Parboil's build system adds
# each benchmark's common_src). Anything else: each top-level directory
# holding a .cu file is a benchmark.
LAYOUTS = {
    "rodinia": ("cuda/*", ["cuda/util", "common"], []),
    "parboil": ("benchmarks/*/src/*", ["common/include"], ["../../common_src/*"]),
    "cuda-samples": ("Samples/*/*", ["Common"], []),
    "polybench-gpu": ("CUDA/*", ["common"], []),
}

SOURCE_EXT = (".cu", ".cuh", ".h", ".hpp", ".hh", ".c", ".cc", ".cpp", ".inc")
INCLUDE_RE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^">]+)[">]', re.M)
# A literal macro definition in a Makefile (`-D$(X)` is left out).
DEFINE_RE = re.compile(r"(?<![\w$(])-D([A-Za-z_]\w*(?:=[^\s'\"$()]+)?)")
# A literal include directory relative to the Makefile.
MAKE_INCLUDE_RE = re.compile(r"(?<![\w$(])-I([^\s$()'\",]+)")


def checkout(git_dir, dest):
    listing = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout
    blobs = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        # Links would point anywhere; suites' sources do not need them.
        if kind == b"blob" and mode != b"120000":
            blobs.append((sha, path.decode()))
    cat = subprocess.Popen(
        ["git", "--git-dir", git_dir, "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    missing = 0
    for sha, path in blobs:
        cat.stdin.write(sha + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if header[1] == b"missing":
            missing += 1
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        target = os.path.join(dest, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
    cat.stdin.close()
    cat.wait()
    print(f"{dest}: {len(blobs) - missing} files, {missing} absent from the mirror")


def walk(top):
    """Files under top, sorted, as paths relative to top."""
    out = []
    for d, dirs, files in os.walk(top):
        dirs.sort()
        out += [os.path.relpath(os.path.join(d, f), top) for f in sorted(files)]
    return out


def benches(name, root):
    """(bench name, bench dir) pairs and the suite's shared include dirs."""
    pattern, common, _ = LAYOUTS.get(name, (None, [], []))
    dirs = sorted({os.path.dirname(f) for f in walk(root) if f.endswith(".cu")})
    found = {}
    for d in dirs:
        parts = d.split(os.sep)
        if pattern:
            pat = pattern.split("/")
            if len(parts) < len(pat) or not fnmatch.fnmatch(
                os.sep.join(parts[: len(pat)]), pattern
            ):
                continue
            bench_dir = os.sep.join(parts[: len(pat)])
            bench = "/".join(p for p, q in zip(parts, pat) if q == "*")
        else:
            bench_dir = parts[0] if parts[0] else "."
            bench = bench_dir
        found[bench] = bench_dir
    common = [c for c in common if os.path.isdir(os.path.join(root, c))]
    return sorted(found.items()), common


def expand(makefile):
    """A Makefile with its one-line `NAME = value` variables substituted,
    enough for `-I$(MATRIX_DIR)`; what stays unresolved keeps its `$`."""
    assign = re.compile(r"^(?:override\s+)?([A-Za-z_]\w*)\s*[:?]?=\s*(.*?)\s*$", re.M)
    variables = {m.group(1): m.group(2) for m in assign.finditer(makefile)}
    use = re.compile(r"\$[({]([A-Za-z_]\w*)[)}]")
    for _ in range(4):
        makefile = use.sub(lambda m: variables.get(m.group(1), m.group(0)), makefile)
    return makefile


def plan(name, root):
    rows = []
    found, common = benches(name, root)
    beside = LAYOUTS.get(name, (None, [], []))[2]
    for bench, bench_dir in found:
        top = os.path.join(root, bench_dir)
        files = [f for f in walk(top) if f.endswith(SOURCE_EXT)]
        included = set()
        for f in files:
            with open(os.path.join(top, f), "rb") as src:
                text = src.read()
            included |= {
                os.path.basename(m.decode(errors="replace"))
                for m in INCLUDE_RE.findall(text)
                if m.endswith(b".cu")
            }
        flags = []
        # The benchmark's directory (the Makefiles' `-I.`), the directories
        # its Makefiles name, those beside it, then the suite's shared ones.
        # Not each file's own directory: b+tree has a cuda.h there, which
        # would hide the toolkit's (quoted includes find it anyway).
        incs = [bench_dir]
        defines = []
        for f in walk(top):
            if not os.path.basename(f).lower().startswith("makefile"):
                continue
            with open(os.path.join(top, f), errors="replace") as mk:
                text = expand(mk.read())
            defines += DEFINE_RE.findall(text)
            for inc in MAKE_INCLUDE_RE.findall(text):
                path = os.path.normpath(os.path.join(bench_dir, os.path.dirname(f), inc))
                if not os.path.isabs(inc) and os.path.isdir(os.path.join(root, path)):
                    incs.append(path)
        for pattern in beside:
            dirs = glob.glob(os.path.join(root, bench_dir, pattern))
            incs += sorted(os.path.relpath(d, root) for d in dirs if os.path.isdir(d))
        incs += common
        seen = set()
        for inc in incs:
            if inc not in seen:
                seen.add(inc)
                flags.append("-I" + os.path.join(root, inc))
        flags += ["-D" + d for d in sorted(set(defines))]
        for f in files:
            if not f.endswith(".cu"):
                continue
            role = "included" if os.path.basename(f) in included else "tu"
            stem = os.path.join(bench, f[: -len(".cu")])
            rows.append((bench, role, os.path.join(bench_dir, f), stem, " ".join(flags)))
    for row in rows:
        print("\t".join(row))


# ---------------------------------------------------------------- report

BRANCH = ["uniform", "none", "total", "partial", "bounded", "unknown"]


def read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def usage(time_file):
    """Wall and CPU (user + system) seconds and peak RSS (MiB) from
    `/usr/bin/time -v`; CPU time includes opt's and holds up when other
    work shares the cores."""
    text = read(time_file)
    wall = rss = None
    cpu = sum(
        float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", text)
    )
    m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", text)
    if m:
        wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        rss = int(m.group(1)) / 1024
    return wall, cpu, rss


def load_json(path):
    for name, opener in ((path, open), (path + ".gz", gzip.open)):
        if os.path.exists(name):
            try:
                with opener(name, "rt") as f:
                    return json.load(f)
            except (OSError, ValueError, EOFError):
                return None
    return None


def run_record(base):
    """One command's outcome: exit status, time, memory and its JSON."""
    rc = read(base + ".rc").strip()
    wall, cpu, rss = usage(base + ".time")
    return {
        "rc": int(rc) if rc.lstrip("-").isdigit() else None,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mib": rss,
        "json": load_json(base + ".json"),
        "stderr_tail": read(base + ".err")[-400:],
    }


def add_counts(into, counts):
    for k, v in counts.items():
        into[k] = into.get(k, 0) + v


def site_class(s):
    """A site's class: its divergence, sectors or conflict figure's."""
    for key in ("divergence", "sectors", "conflict"):
        v = s.get(key)
        if isinstance(v, dict):
            return v.get("class")
    return None


# GPUCheck's Tables 1 and 2 (Lloyd et al. 2019), per Rodinia benchmark:
# (thread-dependent branches, of them unknown, thread-dependent accesses,
# of them unknown). It could not compile cfd, hybridsort, kmeans,
# mummergpu and dwt2d.
GPUCHECK_TABLES = {
    "backprop": (4, 2, 18, 17), "bfs": (6, 6, 14, 4), "b+tree": (14, 12, 25, 1),
    "gaussian": (1, 0, 7, 6), "heartwall": (90, 53, 81, 18), "hotspot3D": (4, 2, 21, 11),
    "hotspot": (16, 5, 3, 0), "huffman": (13, 7, 28, 13), "lavaMD": (6, 3, 9, 0),
    "leukocyte": (15, 10, 3, 3), "lud": (5, 0, 11, 0), "myocyte": (27, 25, 19, 16),
    "nn": (1, 1, 5, 0), "nw": (6, 1, 10, 8), "pathfinder": (10, 6, 3, 0),
    "srad": (18, 2, 25, 8), "streamcluster": (2, 2, 9, 3),
}
GPUCHECK_RODINIA = set(GPUCHECK_TABLES)


def add_locations(into, doc):
    """Thread-dependent branches and global or shared accesses of a check
    report by source location (file, line, column, kind): the copies of
    one source site that unrolling, inlining and templates make are one
    location, unknown when any dependent copy is."""
    for k in doc.get("kernels", []):
        for s in k.get("sites", []):
            if not s.get("thread_dependent"):
                continue
            kind = "branch" if s["kind"] == "branch" else "access"
            if kind == "access" and s.get("space") not in ("global", "shared"):
                continue
            key = (kind, s.get("file"), s.get("line"), s.get("column"))
            unknown = site_class(s) == "unknown"
            was_unknown, was_opaque = into.get(key, (False, False))
            into[key] = (was_unknown or unknown, was_opaque or (unknown and opaque(s)))


def opaque(site):
    """Whether a site's value reads a per-thread leaf the ACF cannot see
    through (`?(the load at 25:25)`: a load, a float result, a value data
    carries round a loop); a `?` that is a ternary has a space after it."""
    return re.search(r"\?[^\s]", site.get("acf") or "") is not None


def location_counts(locs, kind):
    """(dependent, unknown, unknown through an opaque leaf) locations of
    `kind`."""
    mine = [v for (k, *_), v in locs.items() if k == kind]
    return len(mine), sum(u for u, _ in mine), sum(o for _, o in mine)


def pct(part, whole):
    return f"{100 * part / whole:.0f}%" if whole else "-"


def report(out):
    results = os.path.join(out, "results")
    benches_ = defaultdict(
        lambda: {
            "tus": 0,
            "included": 0,
            "failed": [],
            "files": [],
            "toolkits": Counter(),
            "kernels": 0,
            "failures": [],
            "wall_s": 0.0,
            "cpu_s": Counter(),
            "peak_mib": 0.0,
            "branches": {},
            "global": {},
            "shared": {},
            "lowered_branches": {},
            "locations": {},
            "warnings": 0,
            "warnings_no_share": [],
            "uniformity": {
                v: {"ours_only": Counter(), "llvm_only": Counter(), "items": [], "skipped": 0}
                for v in ("plain", "lowered")
            },
        }
    )
    for suite in sorted(os.listdir(out)):
        plan_file = os.path.join(out, suite, "plan.tsv")
        if not os.path.isfile(plan_file):
            continue
        status = {}
        for line in read(os.path.join(out, suite, "compile.tsv")).splitlines():
            stem, rc, toolkit, error, legacy_error = (line.split("\t") + [""] * 4)[:5]
            if legacy_error and legacy_error != error:
                error += f" (legacy toolkit: {legacy_error})"
            status[stem] = (rc, toolkit, error)
        for line in read(plan_file).splitlines():
            bench, role, src, stem, _ = (line.split("\t") + [""] * 5)[:5]
            b = benches_[(suite, bench)]
            if role == "included":
                b["included"] += 1
                continue
            b["tus"] += 1
            rc, toolkit, first_error = status.get(stem, ("not built", "", ""))
            if rc != "0":
                b["failed"].append({"file": src, "status": rc, "error": first_error})
                continue
            b["files"].append(stem)
            b["toolkits"][toolkit] += 1
            for variant, suffix in (("plain", ""), ("lowered", ".lowered")):
                for command in ("check", "uniformity"):
                    base = os.path.join(results, suite, f"{stem}{suffix}.{command}")
                    r = run_record(base)
                    tag = f"{stem}{suffix}.ll {command}"
                    # Every input is IR clang wrote, so 2 is a failure too
                    # (opt over its CPU limit, say); 1 needs --werror.
                    if r["rc"] is None or r["rc"] >= 2 or r["rc"] < 0:
                        b["failures"].append(
                            {"run": tag, "rc": r["rc"], "stderr": r["stderr_tail"]}
                        )
                    if command == "check" and variant == "plain":
                        b["wall_s"] += r["wall_s"] or 0
                    b["cpu_s"][f"{command}_{variant}"] += r["cpu_s"]
                    b["peak_mib"] = max(b["peak_mib"], r["peak_mib"] or 0)
                    doc = r["json"]
                    if not doc:
                        continue
                    if command == "check":
                        total = doc.get("summary", {}).get("total", {})
                        if variant == "plain":
                            add_locations(b["locations"], doc)
                            for f in doc.get("findings", []):
                                if f.get("severity") == "note":
                                    continue
                                b["warnings"] += 1
                                if (f.get("impact") or {}).get("share") is None:
                                    b["warnings_no_share"].append(
                                        f"{f.get('file')}:{f.get('line')} {f.get('check')}"
                                    )
                            b["kernels"] += len(doc.get("kernels", []))
                            add_counts(b["branches"], total.get("branches", {}))
                            add_counts(b["global"], total.get("global", {}))
                            add_counts(b["shared"], total.get("shared", {}))
                        else:
                            add_counts(b["lowered_branches"], total.get("branches", {}))
                        continue
                    u = b["uniformity"][variant]
                    u["skipped"] += doc.get("summary", {}).get("skipped", 0)
                    for f in doc.get("files", []):
                        for fn in f.get("functions", []):
                            for d in fn.get("disagreements", []):
                                if d["kind"] != "branch":
                                    continue
                                if d["warpcheck_dependent"]:
                                    u["ours_only"][d["reason"]] += 1
                                    u["items"].append(
                                        {
                                            "file": f"{stem}{suffix}.ll",
                                            "function": fn["function"],
                                            "kernel": fn["kernel"],
                                            "line": d["line"],
                                            "value": d["value"],
                                            "reason": d["reason"],
                                        }
                                    )
                                else:
                                    u["llvm_only"][d["reason"]] += 1
    rows = []
    for (suite, bench), b in sorted(benches_.items()):
        dep = sum(v for k, v in b["branches"].items() if k != "uniform")
        unknown = b["branches"].get("unknown", 0)
        acc = sum(b["global"].values()) + sum(b["shared"].values())
        acc_unknown = b["global"].get("unknown", 0) + b["shared"].get("unknown", 0)
        low_dep = sum(v for k, v in b["lowered_branches"].items() if k != "uniform")
        loc_br, loc_br_unknown, loc_br_opaque = location_counts(b["locations"], "branch")
        loc_acc, loc_acc_unknown, loc_acc_opaque = location_counts(b["locations"], "access")
        row = {
            "suite": suite,
            "bench": bench,
            "tus": b["tus"],
            "included": b["included"],
            "compiled": len(b["files"]),
            "toolkits": dict(b["toolkits"]),
            "compile_failed": b["failed"],
            "kernels": b["kernels"],
            "failures": b["failures"],
            "check_wall_s": round(b["wall_s"], 2),
            "cpu_s": {k: round(v, 2) for k, v in b["cpu_s"].items()},
            "check_cpu_s": round(b["cpu_s"]["check_plain"], 2),
            "uniformity_cpu_s": round(b["cpu_s"]["uniformity_plain"], 2),
            "peak_mib": round(b["peak_mib"], 1),
            "branches": b["branches"],
            "dep_branches": dep,
            "unknown_branches": unknown,
            "global": b["global"],
            "shared": b["shared"],
            "dep_accesses": acc,
            "unknown_accesses": acc_unknown,
            "loc_dep_branches": loc_br,
            "loc_unknown_branches": loc_br_unknown,
            "loc_dep_accesses": loc_acc,
            "loc_unknown_accesses": loc_acc_unknown,
            "loc_opaque_branches": loc_br_opaque,
            "loc_opaque_accesses": loc_acc_opaque,
            "warnings": b["warnings"],
            "warnings_no_share": b["warnings_no_share"],
            "lowered_branches": b["lowered_branches"],
            "lowered_dep_branches": low_dep,
            "lowered_unknown_branches": b["lowered_branches"].get("unknown", 0),
            "uniformity": {
                v: {
                    "ours_only_branches": sum(u["ours_only"].values()),
                    "ours_only_by_reason": dict(u["ours_only"]),
                    "llvm_only_branches": sum(u["llvm_only"].values()),
                    "llvm_only_by_reason": dict(u["llvm_only"]),
                    "skipped_functions": u["skipped"],
                    "ours_only_items": u["items"],
                }
                for v, u in b["uniformity"].items()
            },
        }
        rows.append(row)
    write_outputs(out, rows)


def short(reason):
    """A reason's first words, for the table."""
    return {
        "memory holding thread-dependent data (LLVM assumes one value per uniform address)": "memory",
        "lanes meet on different iterations of a loop (LLVM counts iterations apart)": "loop skew",
    }.get(reason, reason)


def reasons(by_reason):
    return ", ".join(f"{short(r)} {n}" for r, n in sorted(by_reason.items(), key=lambda x: -x[1]))


def write_outputs(out, rows):
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(rows, f, indent=1, sort_keys=True)
    tsv_cols = [
        "suite", "bench", "tus", "included", "compiled", "kernels", "check_wall_s", "check_cpu_s",
        "uniformity_cpu_s", "peak_mib",
        "dep_branches", "unknown_branches", "dep_accesses", "unknown_accesses",
        "loc_dep_branches", "loc_unknown_branches", "loc_dep_accesses", "loc_unknown_accesses",
        "lowered_dep_branches", "lowered_unknown_branches",
    ]
    with open(os.path.join(out, "report.tsv"), "w") as f:
        head = tsv_cols + ["failures"] + [f"br_{c}" for c in BRANCH]
        head += [f"{v}_{k}" for v in ("plain", "lowered") for k in ("ours_only", "llvm_only")]
        f.write("\t".join(head) + "\n")
        for r in rows:
            cells = [str(r[c]) for c in tsv_cols] + [str(len(r["failures"]))]
            cells += [str(r["branches"].get(c, 0)) for c in BRANCH]
            for v in ("plain", "lowered"):
                u = r["uniformity"][v]
                cells += [str(u["ours_only_branches"]), str(u["llvm_only_branches"])]
            f.write("\t".join(cells) + "\n")

    md = []
    md.append(
        "TUs: files compiled / translation units (files other files #include, files "
        "compiled only with the legacy toolkit, CUDA 11.8); "
        "check s, compare s: CPU seconds of `check --summary --sites --format json` and of "
        "`check --compare-uniformity --format json` (with its opt) on the plain IR, "
        "summed (wall times, in report.json, suffer from other work on the machine); "
        "peak: the largest RSS of any run; unknown: of thread-dependent branches and accesses "
        "(plain IR; lowered: the same on the lowered IR), per IR site and per source location "
        "(loc.: copies of one source site merged, unknown when any dependent copy is); "
        "last column: branches "
        "`--compare-uniformity` finds warpcheck-dependent and LLVM-uniform.\n"
    )
    md.append(
        "| suite/bench | TUs ok/all (incl., legacy) | kernels | check s | compare s | peak MiB | failed runs | "
        "dep. branches: none/total/partial/bounded/unknown | unknown br. | unknown acc. | "
        "unknown br. (loc.) | unknown acc. (loc.) | "
        "lowered unknown br. | dep. vs LLVM-uniform br. (plain / lowered) |"
    )
    md.append("|" + "---|" * 14)
    for r in rows:
        br = r["branches"]
        classes = "/".join(str(br.get(c, 0)) for c in BRANCH[1:])
        plain, low = r["uniformity"]["plain"], r["uniformity"]["lowered"]
        md.append(
            f"| {r['suite']}/{r['bench']} | {r['compiled']}/{r['tus']} "
            f"({r['included']}, {r['toolkits'].get('legacy', 0)}) | "
            f"{r['kernels']} | {r['check_cpu_s']:.1f} | {r['uniformity_cpu_s']:.1f} | "
            f"{r['peak_mib']:.0f} | "
            f"{len(r['failures']) or ''} | {classes} | "
            f"{r['unknown_branches']}/{r['dep_branches']} {pct(r['unknown_branches'], r['dep_branches'])} | "
            f"{r['unknown_accesses']}/{r['dep_accesses']} {pct(r['unknown_accesses'], r['dep_accesses'])} | "
            f"{r['loc_unknown_branches']}/{r['loc_dep_branches']} "
            f"{pct(r['loc_unknown_branches'], r['loc_dep_branches'])} | "
            f"{r['loc_unknown_accesses']}/{r['loc_dep_accesses']} "
            f"{pct(r['loc_unknown_accesses'], r['loc_dep_accesses'])} | "
            f"{r['lowered_unknown_branches']}/{r['lowered_dep_branches']} | "
            f"{plain['ours_only_branches']} / {low['ours_only_branches']} |"
        )
    totals = Counter()
    for r in rows:
        totals["dep"] += r["dep_branches"]
        totals["unknown"] += r["unknown_branches"]
        totals["acc"] += r["dep_accesses"]
        totals["acc_unknown"] += r["unknown_accesses"]
        for k in ("loc_dep_branches", "loc_unknown_branches", "loc_dep_accesses", "loc_unknown_accesses"):
            totals[k] += r[k]
        totals["tus"] += r["tus"]
        totals["compiled"] += r["compiled"]
        totals["kernels"] += r["kernels"]
        totals["failures"] += len(r["failures"])
        totals["warnings"] += r["warnings"]
        totals["no_share"] += len(r["warnings_no_share"])
    md.append(
        f"\nTotal: {totals['compiled']}/{totals['tus']} translation units compiled, "
        f"{totals['kernels']} kernels, {totals['failures']} failed runs (exit ≥ 2, a signal or "
        f"a limit); unknown {totals['unknown']}/{totals['dep']} thread-dependent branches "
        f"({pct(totals['unknown'], totals['dep'])}), {totals['acc_unknown']}/{totals['acc']} "
        f"thread-dependent accesses ({pct(totals['acc_unknown'], totals['acc'])}); per source "
        f"location {totals['loc_unknown_branches']}/{totals['loc_dep_branches']} branches "
        f"({pct(totals['loc_unknown_branches'], totals['loc_dep_branches'])}), "
        f"{totals['loc_unknown_accesses']}/{totals['loc_dep_accesses']} accesses "
        f"({pct(totals['loc_unknown_accesses'], totals['loc_dep_accesses'])}). "
        f"{totals['warnings']} warnings, {totals['no_share']} of them without an estimated "
        f"share of their kernel's time."
    )
    gpucheck = [r for r in rows if r["suite"] == "rodinia" and r["bench"] in GPUCHECK_RODINIA]
    if gpucheck:
        t = Counter()
        for r in gpucheck:
            for k in ("loc_dep_branches", "loc_unknown_branches", "loc_opaque_branches",
                      "loc_dep_accesses", "loc_unknown_accesses", "loc_opaque_accesses"):
                t[k] += r[k]
        missing = sorted(GPUCHECK_RODINIA - {r["bench"] for r in gpucheck if r["compiled"]})
        md.append(
            "\n| benchmark | dep. branches | unknown | through data | GPUCheck | "
            "dep. accesses | unknown | through data | GPUCheck |\n|---|---|---|---|---|---|---|---|---|"
        )
        g = Counter()
        for r in sorted(gpucheck, key=lambda r: r["bench"].lower()):
            gb, gu, ga, gau = GPUCHECK_TABLES[r["bench"]]
            g.update({"b": gb, "u": gu, "a": ga, "au": gau})
            md.append(
                f"| {r['bench']} | {r['loc_dep_branches']} | {r['loc_unknown_branches']} "
                f"({pct(r['loc_unknown_branches'], r['loc_dep_branches'])}) | "
                f"{r['loc_opaque_branches']} | {gu}/{gb} | {r['loc_dep_accesses']} | "
                f"{r['loc_unknown_accesses']} ({pct(r['loc_unknown_accesses'], r['loc_dep_accesses'])}) | "
                f"{r['loc_opaque_accesses']} | {gau}/{ga} |"
            )
        md.append(
            f"| **total** | {t['loc_dep_branches']} | {t['loc_unknown_branches']} "
            f"({pct(t['loc_unknown_branches'], t['loc_dep_branches'])}) | {t['loc_opaque_branches']} | "
            f"{g['u']}/{g['b']} ({pct(g['u'], g['b'])}) | {t['loc_dep_accesses']} | "
            f"{t['loc_unknown_accesses']} ({pct(t['loc_unknown_accesses'], t['loc_dep_accesses'])}) | "
            f"{t['loc_opaque_accesses']} | {g['au']}/{g['a']} ({pct(g['au'], g['a'])}) |"
        )
        md.append(
            f"\nRodinia, GPUCheck's {len(GPUCHECK_RODINIA)} benchmarks"
            f"{' (not compiled: ' + ', '.join(missing) + ')' if missing else ''}, per source "
            f"location: unknown {t['loc_unknown_branches']}/{t['loc_dep_branches']} thread-dependent "
            f"branches ({pct(t['loc_unknown_branches'], t['loc_dep_branches'])}; "
            f"{t['loc_opaque_branches']} of them read a per-thread value the ACF cannot see through: "
            f"a load, a float, data carried round a loop), {t['loc_unknown_accesses']}/"
            f"{t['loc_dep_accesses']} thread-dependent accesses "
            f"({pct(t['loc_unknown_accesses'], t['loc_dep_accesses'])}; {t['loc_opaque_accesses']} "
            f"through such a value)."
        )
    ours = [r for r in rows if any(r["uniformity"][v]["ours_only_branches"] for v in r["uniformity"])]
    if ours:
        md.append("\n### Branches warpcheck calls dependent and LLVM uniform\n")
        for r in ours:
            for v in ("plain", "lowered"):
                u = r["uniformity"][v]
                if u["ours_only_branches"]:
                    lines = defaultdict(set)
                    for item in u["ours_only_items"]:
                        lines[item["file"]].add(item["line"])
                    where = "; ".join(
                        f"{f} lines {', '.join(map(str, sorted(ls)))}" for f, ls in sorted(lines.items())
                    )
                    md.append(
                        f"- {r['suite']}/{r['bench']} ({v}): {u['ours_only_branches']}: "
                        f"{reasons(u['ours_only_by_reason'])} ({where})"
                    )
    failed = [(r, f) for r in rows for f in r["compile_failed"]]
    if failed:
        md.append(f"\n### Not compiled ({len(failed)})\n")
        for r, f in failed:
            md.append(f"- {r['suite']}/{f['file']}: {f['status']}: {f['error']}")
    crashed = [(r, f) for r in rows for f in r["failures"]]
    if crashed:
        md.append(
            f"\n### Failed runs ({len(crashed)}): 2 a failed step (opt), 124 the wall "
            f"clock, 152 the CPU limit, ≥ 3 otherwise a crash\n"
        )
        for r, f in crashed:
            last = f["stderr"].strip().splitlines()[-1:] or [""]
            md.append(f"- {r['suite']}/{f['run']}: exit {f['rc']}: {last[0][:200]}")
    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text)
    print(text, end="")


def main(argv):
    if len(argv) == 3 and argv[0] == "checkout":
        checkout(argv[1], argv[2])
    elif len(argv) == 3 and argv[0] == "plan":
        plan(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "report":
        report(argv[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
