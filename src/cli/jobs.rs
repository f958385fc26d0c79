//! The translation units one `check` run analyses (named files, or a
//! compile database's entries) and running them on several threads.

use crate::frontend::{compdb, CompileOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One file and how to compile it.
#[derive(Clone, Debug)]
pub struct Job {
    pub file: PathBuf,
    pub options: CompileOptions,
}

/// The jobs of a run: every file named, with the command line's options
/// `cli`; or, with `-p`, the database's CUDA entries (only those named, if
/// any), each with its own options plus the command line's includes,
/// defines, flags and toolkit. Problems with single entries are printed and
/// collected in `problems` (they make the run's exit code 2); the other
/// entries still run.
pub fn collect(
    files: &[PathBuf],
    build: Option<&Path>,
    cli: &CompileOptions,
    problems: &mut Vec<String>,
) -> Result<Vec<Job>, String> {
    let mut problem = |message: String| {
        eprintln!("warpcheck: error: {message}");
        problems.push(message);
    };
    let Some(build) = build else {
        return Ok(once_each(
            files
                .iter()
                .map(|f| Job {
                    file: f.clone(),
                    options: cli.clone(),
                })
                .collect(),
        ));
    };
    let db = compdb::read(build, cli.allow_unsafe_flags).map_err(|e| e.message)?;
    let wanted: Vec<PathBuf> = files.iter().map(|f| absolute(f)).collect();
    let is_wanted = |f: &Path| wanted.is_empty() || wanted.iter().any(|w| same_file(w, f));
    for (file, e) in &db.errors {
        if is_wanted(file) {
            problem(e.to_string());
        }
    }
    for u in &db.unknown_options {
        eprintln!("warpcheck: warning: dropped the compiler option '{u}' (not known to warpcheck)");
    }
    let mut jobs = Vec::new();
    for j in db.jobs {
        if !is_wanted(&j.file) {
            continue;
        }
        let mut options = j.options;
        options.includes.extend(cli.includes.iter().cloned());
        options.defines.extend(cli.defines.iter().cloned());
        options.extra.extend(cli.extra.iter().cloned());
        if cli.cuda_path.is_some() {
            options.cuda_path = cli.cuda_path.clone();
        }
        options.allow_unsafe_flags = cli.allow_unsafe_flags;
        jobs.push(Job {
            file: j.file,
            options,
        });
    }
    for w in &wanted {
        let known = jobs.iter().any(|j| same_file(w, &j.file))
            || db.errors.iter().any(|(f, _)| same_file(w, f));
        if !known {
            problem(format!(
                "{}: not a CUDA entry of {}",
                w.display(),
                build.display()
            ));
        }
    }
    Ok(once_each(jobs))
}

/// The jobs without repeats: a file named twice with the same options
/// (the same entry 40 times in a database, a file named again on the
/// command line, by another spelling of its path) is compiled and
/// reported once, where it first comes.
fn once_each(jobs: Vec<Job>) -> Vec<Job> {
    let mut seen = std::collections::HashSet::new();
    jobs.into_iter()
        .filter(|j| {
            let file = j.file.canonicalize().unwrap_or_else(|_| absolute(&j.file));
            seen.insert((file, j.options.clone()))
        })
        .collect()
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Runs `work` on every job with up to `threads` threads, and returns the
/// results in the jobs' order. With stderr a terminal, a progress line
/// counts the files done. A job whose `work` panicked has `None`.
pub fn run_all<T: Send>(
    jobs: &[Job],
    threads: usize,
    work: impl Fn(&Job) -> T + Sync,
) -> Vec<Option<T>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let progress = std::io::stderr().is_terminal() && jobs.len() > 1;
    let worker = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = jobs.get(i) else { break };
        let r = work(job);
        if let Ok(mut all) = results.lock() {
            all[i] = Some(r);
        }
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if progress {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K[{n}/{}] {}", jobs.len(), job.file.display());
            let _ = err.flush();
        }
    };
    let threads = threads.clamp(1, jobs.len().max(1));
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(worker);
        }
        worker();
    });
    if progress {
        eprint!("\r\x1b[K");
    }
    results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The default `-j`: the machine's cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_jobs_run_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.cu");
        std::fs::write(&a, "").unwrap();
        std::fs::create_dir(dir.path().join("x")).unwrap();
        let other = CompileOptions {
            defines: vec!["N=4".into()],
            ..CompileOptions::default()
        };
        let job = |file: PathBuf, options: &CompileOptions| Job {
            file,
            options: options.clone(),
        };
        let plain = CompileOptions::default();
        // The same file by three spellings and the same options, then with
        // another define: two jobs, in the order they first came.
        let jobs = once_each(vec![
            job(a.clone(), &plain),
            job(dir.path().join(".").join("a.cu"), &plain),
            job(a.clone(), &other),
            job(dir.path().join("x").join("..").join("a.cu"), &plain),
            job(a.clone(), &plain),
        ]);
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].options, plain);
        assert_eq!(jobs[1].options, other);
    }
}
