//! `warpcheck report -p BUILD -o report.html`: one self-contained page
//! from a compile database written for nvcc, checked as text and, through
//! headless Chromium, as the picture a user sees.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The row-sum kernel and nvcc_db's odd-lanes kernel (built with
/// -DODD_ONLY) in a temp dir, with an nvcc database, and an entry whose
/// file is gone.
fn project(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    for (from, f) in [("report", "rows.cu"), ("nvcc_db", "odd.cu")] {
        let src = fixture(&format!("projects/{from}/src/{f}"));
        std::fs::copy(src, dir.join("src").join(f)).unwrap();
    }
    let build = dir.join("build");
    std::fs::create_dir_all(&build).unwrap();
    let nvcc = "/usr/local/cuda/bin/nvcc -ccbin=/usr/bin/g++ --expt-relaxed-constexpr";
    let entry = |file: &str, flags: &str| {
        let path = dir.join("src").join(file);
        serde_json::json!({"directory": build, "file": path,
            "command": format!("{nvcc} {flags} -c {} -o x.o", path.display())})
    };
    let db = serde_json::json!([
        entry("rows.cu", "-arch=sm_80 -lineinfo"),
        entry("odd.cu", "-DODD_ONLY -gencode arch=compute_80,code=sm_80"),
        entry("gone.cu", "-arch=sm_80"),
    ]);
    std::fs::write(build.join("compile_commands.json"), db.to_string()).unwrap();
    build
}

/// Writes the page for the project and returns its text.
fn write_report(dir: &Path) -> (PathBuf, String) {
    let build = project(dir);
    let page = dir.join("report.html");
    let out = run(warpcheck()
        .args(["report", "--sites", "--sweep", "32,64,128", "-p"])
        .arg(&build)
        .arg("-o")
        .arg(&page));
    // The missing file is an input error; the page still has the others.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("gone.cu"), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    (page, html)
}

/// Without `--sites` a card counts its sites but lists none: the page
/// stays within a few times the findings' size.
#[test]
fn sites_are_listed_only_with_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("plain.html");
    let out = run(warpcheck()
        .args(["report", "--no-simulate", "-o"])
        .arg(&page)
        .arg(fixture("cu/branches.cu")));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<h3>Sites"), "{html}");
    // odd_even (branches.cu): the branch on line 3, and the load and the
    // store of a[threadIdx.x] on line 4.
    assert!(
        html.contains("<code>odd_even(float*)</code></h2> <span class=\"muted\">tests/fixtures/cu/branches.cu:2 · block 256×1×1 (default) · 3 sites</span>"),
        "{html}"
    );
}

#[test]
fn the_page_has_findings_sites_bounds_and_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let (_, html) = write_report(dir.path());
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Self-contained: no script, stylesheet, image or font from anywhere.
    for outside in ["src=", "url(", "<script", "<link"] {
        assert!(!html.contains(outside), "{outside}");
    }
    // Links only to the page's own cards.
    assert!(html.matches("href=").count() == html.matches("href=\"#k").count());
    // It opens with the ranked list: odd.cu's warning links to its card.
    let ranked = html.find("Findings, worst first").unwrap();
    assert!(ranked < html.find("<section class=\"kernel\"").unwrap());
    assert!(html.contains("<code>odd(int*)</code></a>"), "{html}");
    assert!(html.contains("row_sums(float const*, float*, int)"));
    assert!(html.contains("odd(int*)"));
    assert!(
        html.contains("gone.cu"),
        "the missing file is named on the page"
    );
    // -DODD_ONLY kept the branch of odd.cu line 6; odd lanes take it in
    // each of the 4 warps of 128 threads: its excerpt is highlighted.
    assert!(
        html.contains("<span class=\"hl\">    6 |   if (t % 2)</span>"),
        "{html}"
    );
    assert!(html.contains("4 of 4 diverging warps"));
    // Sites of row_sums: line 8's load has lanes 4n bytes apart.
    assert!(html.contains("<td>8:") && html.contains("uncoalesced"));
    // Bounds table and one chart per metric with a nonzero bound (rows:
    // sectors and steps; odd: sectors, divwarps, steps... only rows has an
    // integer parameter to sweep).
    assert!(html.contains("Cost bounds per warp"));
    assert!(html.contains("Bound vs simulated, sweeping n"));
    assert!(html.contains("no integer parameter to sweep"));
    assert_eq!(
        html.matches("<svg").count(),
        2,
        "sectors and steps of row_sums"
    );
    // Simulated sectors of the largest warp at n = 32: 32 iterations of 32
    // lanes in 32 sectors, plus the store of 32 consecutive floats (128
    // aligned bytes, 4 sectors): 1028. At n = 64: 2048 + 4. Each is within
    // its bound, and no simulated point anywhere is over one.
    assert!(html.contains("<td class=\"within\">1028</td>"), "{html}");
    assert!(html.contains("<td class=\"within\">2052</td>"));
    assert!(!html.contains("class=\"over\""));
}

/// Chromium under any of its Debian names.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
            (out.status.success() && !p.is_empty()).then(|| PathBuf::from(p))
        })
}

/// RGB pixels of a PNG.
fn pixels(png_file: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::fs::File::open(png_file).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    let px = buf[..info.buffer_size()]
        .chunks(step)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

#[test]
fn chromium_draws_the_header_and_both_series() {
    let Some(browser) = chromium() else {
        // CI installs chromium (scripts/setup.sh); elsewhere it is optional.
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is missing in CI"
        );
        eprintln!("skipped: no chromium on PATH");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (page, _) = write_report(dir.path());
    let shot = dir.path().join("shot.png");
    let out = run(Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,6000",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .env("HOME", dir.path()));
    assert!(shot.exists(), "no screenshot: {}", stderr(&out));
    let (w, h, px) = pixels(&shot);
    assert_eq!((w, h), (1280, 6000));
    let count = |rgb: [u8; 3]| px.iter().filter(|&&p| p == rgb).count();
    // The header bar (#1f2d3d) spans the top of the page.
    assert_eq!(px[10 * w as usize + 640], [0x1f, 0x2d, 0x3d]);
    // The bound's line and squares (#c0392b) and the simulated points
    // (#2471a3) are drawn: two charts of three points each, a legend each.
    assert!(count([0xc0, 0x39, 0x2b]) > 300, "bound series not drawn");
    assert!(
        count([0x24, 0x71, 0xa3]) > 300,
        "simulated series not drawn"
    );
}

#[test]
fn a_failed_simulation_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("far.cu");
    // Every launch with n > 0 stores one float 64 MiB into a 16 MiB
    // buffer: the simulation faults at each of the three points, at the
    // same address.
    std::fs::write(
        &src,
        "__global__ void far(float *out, int n) {\n\
         \x20 if (n > 0) out[threadIdx.x + (16 << 20)] = 1.0f;\n\
         }\n",
    )
    .unwrap();
    let page = dir.path().join("r.html");
    let out = run(warpcheck()
        .args(["report", "--sweep", "32,64,128", "-o"])
        .arg(&page)
        .arg(&src));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("not simulated").count(), 1, "{html}");
    assert!(html.contains("not simulated at every point: "), "{html}");
    assert!(!html.contains("simulated (largest warp)"), "{html}");
}

/// Forty kernels, one a line, each storing `a[threadIdx.x * 32]` (lanes
/// 128 bytes apart: 32 sectors where 4 would do, one uncoalesced warning
/// each). `report` analyses them in batches of 32 as `check` does: the page
/// has every kernel and every finding, in line order across the batches.
#[test]
fn a_file_of_more_kernels_than_a_batch_is_reported_whole() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..40)
        .map(|i| format!("__global__ void k{i}(float *a) {{ a[threadIdx.x * 32] = {i}.0f; }}\n"))
        .collect();
    std::fs::write(dir.path().join("many.cu"), text).unwrap();
    let page = dir.path().join("r.html");
    let out = run(warpcheck()
        .current_dir(dir.path())
        .args(["report", "--no-cuda", "--no-simulate", "--block-dim", "32"])
        .arg("-o")
        .arg(&page)
        .arg("many.cu"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(1 files, 40 kernels, 40 findings)"),
        "{}",
        stderr(&out)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // The store is at column 52, 53 from k10 on (a two-digit name).
    let at: Vec<usize> = (1..=40)
        .map(|line| {
            html.find(&format!("many.cu:{line}:5"))
                .unwrap_or_else(|| panic!("no finding at line {line}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "out of order: {at:?}");
    for i in [0, 31, 32, 39] {
        assert!(html.contains(&format!("k{i}(float*)")), "no kernel k{i}");
    }
}

/// The shares of the kernel's time in the ranked list's warnings, in the
/// page's order.
fn ranked_shares(html: &str) -> Vec<f64> {
    let start = html.find("Findings, worst first").unwrap();
    let end = start + html[start..].find("</section>").unwrap();
    html[start..end]
        .split("<tr>")
        .filter(|row| row.contains("class=\"warning\""))
        .filter_map(|row| {
            let at = row.find("(~")? + 2;
            row[at..at + row[at..].find('%')?].parse().ok()
        })
        .collect()
}

/// The application's files give warnings from about 10% to about 80% of
/// their kernels' time: the ranked list reads them largest first, whatever
/// file they are in, and the first kernel card is the top warning's.
#[test]
fn the_ranked_list_and_the_cards_are_in_order_of_cost() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let app = fixture("projects/app");
    let files: Vec<_> = ["vecadd.cu", "transpose.cu", "particles.cu", "reduce.cu"]
        .iter()
        .map(|f| app.join(f))
        .collect();
    let out = run(warpcheck()
        .args(["report", "--no-simulate", "-o"])
        .arg(&page)
        .args(&files));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let shares = ranked_shares(&html);
    assert!(shares.len() >= 4, "{shares:?}");
    assert!(shares.windows(2).all(|w| w[0] >= w[1]), "{shares:?}");
    // The top warning's kernel card comes first, whichever file it is in
    // (transpose.cu's naive transpose and particles.cu's array of
    // structures, whose fields are read together, are both about 50%):
    // the first row links to the first card.
    let top = html.find("Findings, worst first").unwrap();
    let link = top + html[top..].find("<a href=\"#").unwrap() + "<a href=\"#".len();
    let id = &html[link..link + html[link..].find('"').unwrap()];
    let first_card = html.find("<section class=\"kernel\"").unwrap();
    assert!(
        html[first_card..].starts_with(&format!("<section class=\"kernel\" id=\"{id}\"")),
        "{id}: {}",
        &html[first_card..first_card + 400]
    );
}

/// `reduce.cu` sums into `extern __shared__ float sdata[]`, launched with
/// 512 × 4 bytes of it: the report simulates the kernel with the launch's
/// shared memory (it used to have none, and every point failed), and
/// `--shared-bytes` gives it where the host code does not.
#[test]
fn an_extern_shared_reduction_is_simulated_with_its_launch_s_shared_memory() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let src = fixture("projects/app/reduce.cu");
    let out = run(warpcheck()
        .args(["report", "--sweep", "32,64", "-o"])
        .arg(&page)
        .arg(&src));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("not simulated"), "{html}");
    assert!(html.contains("Bound vs simulated, sweeping n"), "{html}");
    // The same kernel at a block given on the command line has no launch
    // to take the bytes from: without them no point simulates, with them
    // every one does.
    let base = ["report", "--sweep", "32,64", "--block-dim", "512", "-o"];
    let out = run(warpcheck().args(base).arg(&page).arg(&src));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("not simulated at every point"), "{html}");
    assert!(html.contains("0 bytes of shared memory"), "{html}");
    let out = run(warpcheck()
        .args(base)
        .arg(&page)
        .args(["--shared-bytes", "2048"])
        .arg(&src));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("not simulated"), "{html}");
}
