#!/usr/bin/env python3
"""What `warpcheck run` measured where `check` says "unknown" on Rodinia.

    scripts/run-measured.py REPORTS [SUITES_OUT]

REPORTS is a directory of `warpcheck run --format json` reports, one per
program, named `<suite>_<benchmark>[_...].json` as `scripts/run-samples.sh`
keeps them (REPORTS=DIR, or OUT.reports beside its OUT.md, where it also
writes this script's output as OUT.measured.md); SUITES_OUT is `scripts/suites.sh`'s output
(default /work/suites-ir), whose `check` results give each benchmark's
unknown thread-dependent branches and accesses per source location,
counted as docs/models.md's "Thread dependence on Rodinia" table counts
them (scripts/suites.py's add_locations: the copies of one source site
merged, unknown when any dependent copy is).

For each Rodinia benchmark that ran, the run's sites at those locations are summed
over every kernel, block shape and launch (and over every program of the
benchmark: srad's two versions). A branch location "diverged" when some
warp execution split; an access location "over ideal" when its global
requests took more sectors than the fewest their lanes' addresses need,
or its shared accesses more wavefronts than conflict-free ones would.
Prints the per-benchmark table (markdown; a cell is "ran/unknown ran, how
many diverged (in how many of their warp executions)" for branches and
"..., how many over ideal" for accesses, "-" where none is unknown), then
each location.
"""

import json
import os
import re
import sys
from collections import defaultdict

# Nothing written beside the scripts (scripts/__pycache__).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suites  # noqa: E402  (scripts/suites.py: the table's own counting)


def rel(path):
    """A source path relative to the suite's checkout (`cuda/bfs/kernel.cu`),
    however the compile named it."""
    path = os.path.normpath(path or "")
    m = re.search(r"(?:^|/)rodinia/(.*)$", path)
    return m.group(1) if m else path


def unknown_locations(suites_out, bench):
    """The benchmark's unknown locations: {(kind, file, line, column):
    through data}."""
    locs = {}
    plan = suites.read(os.path.join(suites_out, "rodinia", "plan.tsv"))
    for line in plan.splitlines():
        b, role, _src, stem, _ = (line.split("\t") + [""] * 5)[:5]
        if b != bench or role != "tu":
            continue
        doc = suites.load_json(os.path.join(suites_out, "results", "rodinia", stem + ".check.json"))
        if doc:
            suites.add_locations(locs, doc)
    return {
        (kind, rel(f), l, c): opaque
        for (kind, f, l, c), (unknown, opaque) in locs.items()
        if unknown
    }


def measured_sites(reports):
    """The run's figures per location, summed over the reports."""
    out = defaultdict(
        lambda: {"executions": 0, "divergent": 0, "sectors": 0, "ideal": 0,
                 "wavefronts": 0, "ideal_wavefronts": 0, "conflict_max": 0,
                 "requests": 0}
    )
    for doc in reports:
        for k in doc.get("kernels", []):
            for s in k.get("sites", []):
                if not s.get("executions"):
                    continue
                kind = "branch" if s["kind"] == "branch" else "access"
                if kind == "access" and s.get("space") not in ("global", "shared"):
                    continue
                m = out[(kind, rel(s.get("file")), s.get("line"), s.get("column"))]
                m["executions"] += s["executions"]
                m["divergent"] += s.get("divergent", 0)
                if s.get("sectors"):
                    m["requests"] += s["executions"]
                    m["sectors"] += s["sectors"]["total"]
                    m["ideal"] += s.get("ideal_sectors", 0)
                if s.get("wavefronts"):
                    # Per access min..max; the conflict-free total is exact.
                    m["wavefronts"] += s["wavefronts"]["max"] * s["executions"]
                    m["ideal_wavefronts"] += s.get("ideal_wavefronts", 0)
                    m["conflict_max"] = max(m["conflict_max"], s["conflict"]["max"])
    return out


def over_ideal(m):
    if m["requests"]:
        return m["sectors"] > m["ideal"]
    return m["conflict_max"] > 1


def describe(bench, key, m):
    kind, f, line, col = key
    f = f.removeprefix(f"cuda/{bench}/")
    where = f"{f}:{line}:{col}"
    if m is None:
        return f"{where} {kind}: did not run"
    if kind == "branch":
        return f"{where} branch: diverged in {m['divergent']} of {m['executions']} warp executions"
    if m["requests"]:
        return (f"{where} global access: {m['requests']} requests, {m['sectors']} sectors "
                f"(ideal {m['ideal']}), {m['sectors'] / m['requests']:.2f} per request")
    return (f"{where} shared access: {m['executions']} accesses, conflict up to "
            f"{m['conflict_max']}-way")


def cell(keys, measured, kind):
    """`ran/unknown ran, how many diverged (in how many of their warp
    executions)` or `..., how many over ideal`; "-" when none is unknown."""
    mine = [k for k in keys if k[0] == kind]
    if not mine:
        return "-"
    ran = [measured[k] for k in mine if k in measured]
    text = f"{len(ran)}/{len(mine)} ran"
    if not ran:
        return text
    if kind == "branch":
        split = [m for m in ran if m["divergent"]]
        execs = sum(m["executions"] for m in ran)
        div = sum(m["divergent"] for m in ran)
        return text + f", {len(split)} diverged ({div} of {execs})"
    over = [m for m in ran if over_ideal(m)]
    return text + f", {len(over)} over ideal"


def row(keys, measured):
    b, a = cell(keys, measured, "branch"), cell(keys, measured, "access")
    return "nothing unknown" if b == a == "-" else f"{b}; {a}"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    reports_dir = argv[1]
    suites_out = argv[2] if len(argv) > 2 else "/work/suites-ir"
    plan = os.path.join(suites_out, "rodinia", "plan.tsv")
    if not os.path.isfile(plan):
        print(f"{plan}: no such file (run scripts/suites.sh over Rodinia first)", file=sys.stderr)
        return 2
    by_bench = defaultdict(list)
    for name in sorted(os.listdir(reports_dir)):
        m = re.match(r"rodinia_([^_.]+)", name)
        if not m or not name.endswith(".json"):
            continue
        doc = suites.load_json(os.path.join(reports_dir, name))
        if doc:
            by_bench[m.group(1)].append(doc)
    print("| benchmark | measured: unknown branches; unknown accesses |")
    print("|---|---|")
    details = []
    all_keys, all_measured = {}, {}
    for bench in sorted(suites.GPUCHECK_RODINIA, key=str.lower):
        keys = unknown_locations(suites_out, bench)
        if bench not in by_bench:
            continue
        measured = measured_sites(by_bench[bench])
        all_keys.update({(bench,) + k: v for k, v in keys.items()})
        all_measured.update({(bench,) + k: v for k, v in measured.items()})
        print(f"| {bench} | {row(keys, measured)} |")
        for key in sorted(keys, key=lambda k: (k[0], k[1], k[2], k[3])):
            details.append(f"- {bench}: {describe(bench, key, measured.get(key))}")
    # The totals, with the benchmark in front of each location.
    keys = {k[1:2] + k[:1] + k[2:]: v for k, v in all_keys.items()}
    measured = {k[1:2] + k[:1] + k[2:]: v for k, v in all_measured.items()}
    print(f"| **total** | {row(keys, measured)} |")
    print()
    print("\n".join(details))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
