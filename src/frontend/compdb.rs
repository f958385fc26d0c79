//! `compile_commands.json`, as clang-tidy reads it (`-p BUILD_DIR`): each
//! CUDA translation unit with the options its own build used.

use super::flags;
use super::nvcc::{split_command, translate, Translated};
use super::{CompileOptions, InputError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One entry as the database holds it.
#[derive(Deserialize, Debug)]
struct Entry {
    directory: PathBuf,
    file: PathBuf,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    arguments: Option<Vec<String>>,
}

/// A translation unit to analyse.
#[derive(Clone, Debug)]
pub struct Job {
    pub file: PathBuf,
    pub options: CompileOptions,
}

/// What a database gives: the jobs, the options we dropped, and the
/// entries we could not use (each with its file, and the reason).
#[derive(Debug, Default)]
pub struct Database {
    pub jobs: Vec<Job>,
    pub unknown_options: Vec<String>,
    pub errors: Vec<(PathBuf, InputError)>,
}

/// The largest compile database read: about a million entries.
const MAX_BYTES: u64 = 1 << 30;

/// Reads `BUILD_DIR/compile_commands.json` (or the file itself). Unless
/// `allow_unsafe`, an entry whose command loads code, changes the toolchain
/// or reads other configuration is an error naming the database's line and
/// the flag (see [`flags`]), and flags passed on to clang that are not on
/// the allow-list are dropped like unknown options.
pub fn read(build: &Path, allow_unsafe: bool) -> Result<Database, InputError> {
    let path = if build.is_dir() {
        build.join("compile_commands.json")
    } else {
        build.to_path_buf()
    };
    let text = crate::files::read_text(&path, "compile database", MAX_BYTES)
        .map_err(|message| InputError { message })?;
    let not_a_database = |e: serde_json::Error| InputError {
        message: format!(
            "{}:{}:{}: not a compile database: {e}",
            path.display(),
            e.line(),
            e.column()
        ),
    };
    // Each entry with where its text starts, so that a problem with an
    // entry names the entry's own line.
    let raw: Vec<&serde_json::value::RawValue> =
        serde_json::from_str(&text).map_err(not_a_database)?;
    let mut entries = Vec::with_capacity(raw.len());
    for r in raw {
        let start = r.get().as_ptr() as usize - text.as_ptr() as usize;
        let entry: Entry = serde_json::from_str(r.get()).map_err(|e| InputError {
            message: format!(
                "{}:{}: not a compile database entry: {e}",
                path.display(),
                text[..start].matches('\n').count() + e.line()
            ),
        })?;
        entries.push((start, entry));
    }
    if entries.is_empty() {
        return Err(InputError {
            message: format!(
                "{}: the compile database has no entries (was the build configured?)",
                path.display()
            ),
        });
    }
    // An `-include` from the database must lie in the project: the
    // database's directory (the build) or the one above it.
    let dir = path.parent().unwrap_or(Path::new("."));
    let project = dir.parent().unwrap_or(dir);
    let mut db = Database::default();
    for (n, (start, e)) in entries.into_iter().enumerate() {
        let entry_text = &text[start..];
        let entry_line = text[..start].matches('\n').count() + 1;
        let at = format!("{}:{entry_line}: entry {}", path.display(), n + 1);
        let file = e.directory.join(&e.file);
        let vetted = job(&e).and_then(|j| match j {
            Some(j) if !allow_unsafe => vet(j, &e, project).map(Some).map_err(|r| format!("{r}")),
            other => Ok(other),
        });
        let vetted = vetted.map_err(|m| match flag_in(&m) {
            Some(flag) => format!(
                "{}:{}: entry {}: {m}",
                path.display(),
                entry_line + line_of(entry_text, flag) - 1,
                n + 1
            ),
            None => format!("{at}: {m}"),
        });
        match vetted {
            Ok(Some((job, unknown))) => {
                for u in unknown {
                    if !db.unknown_options.contains(&u) {
                        db.unknown_options.push(u);
                    }
                }
                if job.file.is_file() {
                    db.jobs.push(job);
                } else {
                    let message = format!("{at}: {}: no such file", job.file.display());
                    db.errors.push((file, InputError { message }));
                }
            }
            Ok(None) => {}
            Err(message) => {
                db.errors.push((file, InputError { message }));
            }
        }
    }
    Ok(db)
}

/// Refuses an entry whose command has a flag always refused (whether or
/// not clang would see it), and drops from what reaches clang the flags
/// off the allow-list (`-Xcompiler` passes host flags through).
fn vet(
    (mut job, mut unknown): (Job, Vec<String>),
    e: &Entry,
    project: &Path,
) -> Result<(Job, Vec<String>), flags::Refusal> {
    let mut args = command_words(e).unwrap_or_default();
    // The build's own warpcheck plugin (the CMake package and the Make
    // snippet put it on every compile line) is ours, not foreign code.
    let own = flags::own_plugin_words(&args);
    if !own.is_empty() {
        tracing::debug!(
            "{}: dropped warpcheck's own plugin flag {}",
            e.file.display(),
            own.iter()
                .map(|&i| args[i].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        );
        args = args
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !own.contains(i))
            .map(|(_, a)| a)
            .collect();
    }
    if let Some(r) = flags::first_always_refused(&args)
        .or_else(|| flags::first_always_refused(&job.options.extra))
    {
        return Err(r);
    }
    let mut kept = Vec::new();
    let extra = std::mem::take(&mut job.options.extra);
    let mut i = 0;
    while i < extra.len() {
        // `-isystem DIR`, `-include FILE`: judged together.
        let words = if matches!(extra[i].as_str(), "-isystem" | "-include") {
            2
        } else {
            1
        };
        let flag = &extra[i..(i + words).min(extra.len())];
        match flags::vet(flag, project) {
            Ok(()) => kept.extend(flag.iter().cloned()),
            Err(r) => unknown.push(r.flag),
        }
        i += words;
    }
    job.options.extra = kept;
    Ok((job, unknown))
}

/// The refused flag a message from [`vet`] quotes.
fn flag_in(message: &str) -> Option<&str> {
    let rest = message.strip_prefix('\'')?;
    let flag = &rest[..rest.find('\'')?];
    // `-Xclang -load` spans two words of the database: find the first.
    flag.split(' ').next()
}

/// The 1-based line of the first place `needle` appears in `text` (1 if
/// nowhere).
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle)
        .map_or(1, |at| text[..at].matches('\n').count() + 1)
}

fn command_words(e: &Entry) -> Result<Vec<String>, String> {
    match (&e.arguments, &e.command) {
        (Some(a), _) => Ok(a.clone()),
        (None, Some(c)) => split_command(c),
        (None, None) => Err("neither `arguments` nor `command`".into()),
    }
}

/// The job of one entry, with the options dropped; `None` for entries
/// that compile no CUDA (host `.cpp` files, links).
fn job(e: &Entry) -> Result<Option<(Job, Vec<String>)>, String> {
    let args = command_words(e)?;
    if args.is_empty() {
        return Err("an empty command".into());
    }
    let file = if e.file.is_absolute() {
        e.file.clone()
    } else {
        e.directory.join(&e.file)
    };
    let Some(Translated {
        options, unknown, ..
    }) = translate_command(&args, &e.directory)
    else {
        return Ok(None);
    };
    let cuda = file.extension().is_some_and(|x| x == "cu")
        || args.windows(2).any(|w| w[0] == "-x" && w[1] == "cuda");
    Ok(cuda.then_some((Job { file, options }, unknown)))
}

/// A compile command (`args[0]` the compiler) run in `dir`, for nvcc or
/// clang; `None` for other compilers.
pub fn translate_command(args: &[String], dir: &Path) -> Option<Translated> {
    let name = Path::new(args.first()?)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    if name.contains("nvcc") {
        Some(translate(args, dir))
    } else if name.contains("clang") {
        Some(clang_options(args, dir))
    } else {
        None
    }
}

/// The file name of warpcheck's force-included header.
const CUDA_HEADER_NAME: &str = "warpcheck_cuda.h";

/// From a clang CUDA command, what the device compile shares with it.
fn clang_options(args: &[String], dir: &Path) -> Translated {
    let mut t = Translated::default();
    let mut it = args.iter().skip(1).peekable();
    let abs = |p: &str| dir.join(p);
    while let Some(a) = it.next() {
        let mut value = |flag: &str| -> Option<String> {
            match a.strip_prefix(flag) {
                Some("") => it.next().cloned(),
                Some(v) => Some(v.trim_start_matches('=').to_string()),
                None => None,
            }
        };
        if let Some(v) = value("-I") {
            t.options.includes.push(abs(&v));
        } else if let Some(v) = value("-D") {
            t.options.defines.push(v);
        } else if let Some(v) = value("--cuda-gpu-arch") {
            t.options.gpu_arch = v;
        } else if let Some(v) = value("--offload-arch") {
            t.options.gpu_arch = v;
        } else if let Some(v) = value("--cuda-path") {
            t.options.cuda_path = Some(abs(&v));
        } else if let Some(v) = value("-isystem") {
            t.options
                .extra
                .extend(["-isystem".into(), abs(&v).display().to_string()]);
        } else if a.starts_with("-include-pch") {
            // A precompiled header of the build's own: not ours to read.
            it.next_if(|_| a == "-include-pch");
        } else if let Some(v) = value("-include") {
            // warpcheck's own header stands for a toolkit the build lacks:
            // the compile brings its own (`no_toolkit`); another is kept.
            if Path::new(&v)
                .file_name()
                .is_some_and(|n| n == CUDA_HEADER_NAME)
            {
                t.options.no_toolkit = true;
            } else {
                t.options
                    .extra
                    .extend(["-include".into(), abs(&v).display().to_string()]);
            }
        } else if a == "-nocudainc" {
            t.options.no_toolkit = true;
        } else if a.starts_with("-std=") || a.starts_with("-U") || a == "-fgpu-rdc" {
            t.options.extra.push(a.clone());
        } else if a.ends_with(".cu") && !a.starts_with('-') {
            t.sources.push(abs(a));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_of_both_compilers_and_host_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.cu"), "").unwrap();
        std::fs::write(d.join("b.cu"), "").unwrap();
        let db = serde_json::json!([
            {"directory": d, "file": "a.cu",
             "command": "nvcc -arch=sm_75 -Iinc -DN=4 --weird -c a.cu -o a.o"},
            {"directory": d, "file": "b.cu",
             "arguments": ["clang++", "-x", "cuda", "--cuda-gpu-arch=sm_86", "-I", "x", "-c", "b.cu"]},
            {"directory": d, "file": "main.cpp", "command": "g++ -c main.cpp"},
            {"directory": d, "file": "gone.cu", "command": "nvcc -c gone.cu"},
            {"directory": d, "file": "c.cu"}
        ]);
        std::fs::write(d.join("compile_commands.json"), db.to_string()).unwrap();
        let db = read(d, false).unwrap();
        assert_eq!(db.jobs.len(), 2);
        assert_eq!(db.jobs[0].file, d.join("a.cu"));
        assert_eq!(db.jobs[0].options.gpu_arch, "sm_75");
        assert_eq!(db.jobs[0].options.includes, [d.join("inc")]);
        assert_eq!(db.jobs[0].options.defines, ["N=4"]);
        assert_eq!(db.jobs[1].options.gpu_arch, "sm_86");
        assert_eq!(db.jobs[1].options.includes, [d.join("x")]);
        assert_eq!(db.unknown_options, ["--weird"]);
        // The missing file and the entry without a command.
        assert_eq!(db.errors.len(), 2, "{:?}", db.errors);
        assert!(db.errors[0].1.message.contains("gone.cu: no such file"));
        assert_eq!(db.errors[1].0, d.join("c.cu"));
        assert!(db.errors[1].1.message.contains(": entry 5: neither"));
    }

    #[test]
    fn our_plugin_is_dropped_and_a_foreign_one_refused_at_its_entry() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["a.cu", "b.cu", "c.cu"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let entry = |file: &str, flags: &str| {
            format!(
                "{{\"directory\": \"{}\",\n  \"file\": \"{file}\",\n  \"command\": \"clang++ -x cuda {flags} -c {file}\"}}",
                d.display()
            )
        };
        let text = format!(
            "[\n{},\n{},\n{}\n]\n",
            entry(
                "a.cu",
                "-fpass-plugin=/opt/wc/lib/libwarpcheck-llvm19.so -gline-tables-only"
            ),
            entry(
                "b.cu",
                "-Xarch_device -fpass-plugin=/opt/wc/lib/libwarpcheck.so"
            ),
            entry("c.cu", "-fpass-plugin=/tmp/libevil.so")
        );
        std::fs::write(d.join("compile_commands.json"), &text).unwrap();
        let db = read(d, false).unwrap();
        assert_eq!(db.jobs.len(), 2, "{:?}", db.errors);
        assert_eq!(db.errors.len(), 1);
        // Entry 3 opens on line 8; its command is its third line.
        let e = &db.errors[0].1.message;
        assert!(
            e.contains("compile_commands.json:10: entry 3: '-fpass-plugin=/tmp/libevil.so'"),
            "{e}"
        );
    }

    #[test]
    fn malformed_databases_name_the_place() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("compile_commands.json"), "[{\"file\": 3}").unwrap();
        let e = read(dir.path(), false).unwrap_err();
        assert!(e.message.contains("compile_commands.json:1:"), "{e}");
    }
}
