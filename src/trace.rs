//! Observability: the stages run inside `tracing` spans (`file`, `load`,
//! `graphs`, `kernel`, `taint`, `acf`, `checks`, and `cost` with the LP's
//! variables and rows when bounds are asked for), whose fields carry the
//! budget counters (path edges, expressions, contexts). Two consumers:
//!
//! * `WARPCHECK_LOG=debug` (any `tracing` filter) prints spans as they
//!   close, with their time and fields, and every event, to stderr. It
//!   works for the CLI and the plugin alike.
//! * `check --timing` sums each stage's busy time per file and prints one
//!   line when the file's span closes (what `scripts/bench-*.sh` read).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io::IsTerminal;
use std::time::{Duration, Instant};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{EnvFilter, Layer, Registry};

/// The environment variable holding the log filter.
pub const LOG_ENV: &str = "WARPCHECK_LOG";

/// The subscriber for this process: the log printer when `WARPCHECK_LOG`
/// is set, the per-file timing when `timing`; `None` when neither (then
/// spans cost next to nothing).
pub fn subscriber(timing: bool) -> Option<impl Subscriber + Send + Sync> {
    let filter = std::env::var(LOG_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(EnvFilter::new);
    if filter.is_none() && !timing {
        return None;
    }
    let log = filter.map(|f| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_span_events(FmtSpan::CLOSE)
            .with_filter(f)
    });
    let timing = timing.then(Timing::default);
    Some(Registry::default().with(log).with(timing))
}

/// Installs [`subscriber`] for the whole process (the CLI).
pub fn install(timing: bool) {
    if let Some(s) = subscriber(timing) {
        // Only fails if one is already installed: keep that one.
        let _ = tracing::subscriber::set_global_default(s);
    }
}

/// Numeric fields of a span, and its `path` if it has one.
#[derive(Default, Debug)]
struct Fields {
    counts: Vec<(&'static str, u64)>,
    path: Option<String>,
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.counts.push((field.name(), value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record_u64(field, value.max(0) as u64);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "path" {
            self.path = Some(value.to_string());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        if field.name() == "path" {
            self.path = Some(format!("{value:?}").trim_matches('"').to_string());
        }
    }
}

/// Per span: time inside it so far, and its fields.
struct Busy {
    since: Option<Instant>,
    total: Duration,
    fields: Fields,
}

/// Per stage name: the summed busy time and counters of its spans.
#[derive(Default)]
struct Stage {
    time: Duration,
    counts: BTreeMap<&'static str, u64>,
}

/// Where the timing lines go.
type Sink = Box<dyn Fn(String) + Send + Sync>;

/// Sums the stages inside each `file` span (kept on that span, so files
/// analysed in parallel do not mix) and prints them when it closes.
struct Timing {
    sink: Sink,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            sink: Box::new(|line| eprintln!("{line}")),
        }
    }
}

/// A `file` span's stages so far.
#[derive(Default)]
struct FileStages(BTreeMap<&'static str, Stage>);

/// The order stages are printed in; others follow by name.
const ORDER: [&str; 7] = ["load", "graphs", "kernel", "taint", "acf", "checks", "cost"];

impl Timing {
    fn line(path: &str, stages: &BTreeMap<&'static str, Stage>) -> String {
        let mut names: Vec<&&str> = stages.keys().collect();
        names.sort_by_key(|n| ORDER.iter().position(|o| o == *n).unwrap_or(ORDER.len()));
        let parts: Vec<String> = names
            .into_iter()
            .map(|n| {
                let s = &stages[*n];
                let mut p = format!("{n} {:.1} ms", s.time.as_secs_f64() * 1e3);
                if !s.counts.is_empty() {
                    let c: Vec<String> = s.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
                    p.push_str(&format!(" ({})", c.join(", ")));
                }
                p
            })
            .collect();
        format!("warpcheck: timing {path}: {}", parts.join(", "))
    }
}

impl<S> Layer<S> for Timing
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Busy {
                since: None,
                total: Duration::ZERO,
                fields,
            });
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(b) = span.extensions_mut().get_mut::<Busy>() {
                values.record(&mut b.fields);
            }
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(b) = span.extensions_mut().get_mut::<Busy>() {
                b.since = Some(Instant::now());
            }
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(b) = span.extensions_mut().get_mut::<Busy>() {
                if let Some(t) = b.since.take() {
                    b.total += t.elapsed();
                }
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(b) = span.extensions_mut().remove::<Busy>() else {
            return;
        };
        if span.name() == "file" {
            let stages = span
                .extensions_mut()
                .remove::<FileStages>()
                .unwrap_or_default();
            let path = b.fields.path.as_deref().unwrap_or("?");
            (self.sink)(Timing::line(path, &stages.0));
            return;
        }
        let Some(file) = span.scope().skip(1).find(|s| s.name() == "file") else {
            return;
        };
        let mut ext = file.extensions_mut();
        if ext.get_mut::<FileStages>().is_none() {
            ext.insert(FileStages::default());
        }
        let Some(stages) = ext.get_mut::<FileStages>() else {
            return;
        };
        let stage = stages.0.entry(span.name()).or_default();
        stage.time += b.total;
        for (k, v) in b.fields.counts {
            *stage.counts.entry(k).or_default() += v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use tracing::info_span;

    #[test]
    fn timing_sums_stages_and_their_counters() {
        let lines = std::sync::Arc::new(Mutex::new(Vec::new()));
        let out = lines.clone();
        let timing = Timing {
            sink: Box::new(move |l| out.lock().unwrap().push(l)),
        };
        let sub = Registry::default().with(timing);
        tracing::subscriber::with_default(sub, || {
            for file in ["a.cu", "b.cu"] {
                let _f = info_span!("file", path = file).entered();
                for n in [3u64, 4] {
                    let s = info_span!("taint", path_edges = tracing::field::Empty);
                    s.in_scope(|| {
                        tracing::Span::current().record("path_edges", n);
                    });
                }
            }
        });
        let lines = lines.lock().unwrap();
        // One line per file, each with its own sum: 3 + 4.
        assert_eq!(lines.len(), 2);
        for (l, file) in lines.iter().zip(["a.cu", "b.cu"]) {
            assert!(
                l.starts_with(&format!("warpcheck: timing {file}: taint ")),
                "{l}"
            );
            assert!(l.ends_with(" ms (path_edges 7)"), "{l}");
        }
    }

    #[test]
    fn timing_line_lists_stages_in_pipeline_order() {
        let mut stages = BTreeMap::new();
        stages.insert(
            "taint",
            Stage {
                time: Duration::from_millis(2),
                counts: [("path_edges", 7)].into_iter().collect(),
            },
        );
        stages.insert(
            "load",
            Stage {
                time: Duration::from_millis(1),
                counts: BTreeMap::new(),
            },
        );
        assert_eq!(
            Timing::line("a.cu", &stages),
            "warpcheck: timing a.cu: load 1.0 ms, taint 2.0 ms (path_edges 7)"
        );
    }
}
