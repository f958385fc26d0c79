#!/usr/bin/env python3
"""A random sample of warpcheck's warnings over the public suites, for a
hand reading of their figures and hints.

usage: scripts/sample-warnings.py [--seed N] [--count N] [--per-bench N]
                                  [--warpcheck PATH] [--jobs N] IR_DIR

IR_DIR is the output of `scripts/suites.sh build` (SUITE/BENCH/FILE.ll, as
clang emits it; the .lowered.ll copies are skipped). Each file is checked
with `warpcheck check --format json`; the warnings (not notes) are pooled,
and COUNT of them are drawn with SEED, at most PER_BENCH from one
benchmark. Each is printed with its source line, message and hint, so the
reader can judge whether the figure is right and the hint names the fix.
The draw depends only on the seed and the pool, so a reading can be
repeated with the same binary.
"""

import argparse
import concurrent.futures
import json
import pathlib
import random
import subprocess
import sys


def check(warpcheck, ll):
    """The warnings of one IR file (empty when the run fails)."""
    try:
        out = subprocess.run(
            [warpcheck, "check", "--format", "json", "-j1", str(ll)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        doc = json.loads(out.stdout)
    except (subprocess.TimeoutExpired, json.JSONDecodeError):
        return []
    return [f for f in doc.get("findings", []) if f.get("severity") != "note"]


def source_line(path, line):
    try:
        with open(path, errors="replace") as f:
            for n, text in enumerate(f, 1):
                if n == line:
                    return text.rstrip()
    except OSError:
        pass
    return ""


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=39)
    p.add_argument("--count", type=int, default=25)
    p.add_argument("--per-bench", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--warpcheck", default="target/release/warpcheck")
    p.add_argument("ir_dir")
    a = p.parse_args(argv)
    root = pathlib.Path(a.ir_dir)
    files = sorted(
        f
        for f in root.glob("*/**/*.ll")
        if not f.name.endswith(".lowered.ll") and "results" not in f.parts
    )
    pool = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for ll, found in zip(files, ex.map(lambda f: check(a.warpcheck, f), files)):
            bench = "/".join(ll.relative_to(root).parts[:-1])
            pool.extend((bench, f) for f in found)
    pool.sort(key=lambda x: (x[0], x[1]["file"], x[1]["line"], x[1]["column"] or 0, x[1]["message"]))
    rng = random.Random(a.seed)
    rng.shuffle(pool)
    taken, per = [], {}
    for bench, f in pool:
        if per.get(bench, 0) >= a.per_bench:
            continue
        per[bench] = per.get(bench, 0) + 1
        taken.append((bench, f))
        if len(taken) == a.count:
            break
    print(f"# {len(pool)} warnings in {len(files)} files; seed {a.seed}, {len(taken)} drawn\n")
    for n, (bench, f) in enumerate(taken, 1):
        hint = next((x for x in f.get("notes", []) if x.startswith("hint:")), "(no hint)")
        print(f"## {n}. {bench}: {f['file']}:{f['line']}:{f['column']} [{f['check']}]")
        print(f"    {source_line(f['file'], f['line']).strip()}")
        print(f"  {f['message']}")
        print(f"  {hint}\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
