//! The part of a simulation report that says why a run stopped early: the
//! stop itself (placed at its line, thread and block), where the lanes of
//! every warp of the stopped block were, each at its line and loop, and
//! the loads a spinning warp repeats. JSON (a contract: fields are added,
//! never renamed) and text.

use super::error::{LaneGroup, SimError};
use super::exec::lanes;
use crate::ir::Position;
use serde::Serialize;
use std::fmt::Write;

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct PlaceJson {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl From<&Position> for PlaceJson {
    fn from(p: &Position) -> Self {
        PlaceJson {
            file: p.file.clone(),
            line: p.line,
            column: p.col,
        }
    }
}

impl std::fmt::Display for PlaceJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Some lanes of one warp: what they were doing, where, in which loop.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct LanesJson {
    pub block: [u32; 3],
    pub warp: u32,
    /// Lane numbers, as `0-15,20`.
    pub lanes: String,
    /// `running`, `spinning`, `barrier`, `pending`, `returning` or `exited`.
    pub state: &'static str,
    /// The instruction the lanes run next or wait at (not for exited lanes).
    #[serde(flatten)]
    pub at: Option<PlaceJson>,
    /// The innermost loop around it, placed at the loop statement.
    #[serde(rename = "loop", skip_serializing_if = "Option::is_none")]
    pub in_loop: Option<PlaceJson>,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct StopJson {
    pub message: String,
    #[serde(flatten)]
    pub at: Option<PlaceJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<[u32; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<[u32; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
    /// The lanes of every warp of the stopped block.
    pub warps: Vec<LanesJson>,
    /// The loads and atomics the spinning warps repeat (livelock).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<PlaceJson>,
}

fn lanes_json(g: &LaneGroup) -> LanesJson {
    LanesJson {
        block: g.block,
        warp: g.warp,
        lanes: lanes::describe(g.lanes),
        state: g.state.name(),
        at: g.pos.as_ref().map(PlaceJson::from),
        in_loop: g.in_loop.as_ref().map(PlaceJson::from),
    }
}

pub fn json(e: &SimError) -> StopJson {
    StopJson {
        message: e.message.clone(),
        at: e.pos.as_deref().map(PlaceJson::from),
        block: e.block,
        thread: e.thread,
        address: e.address,
        warps: e.details.warps.iter().map(lanes_json).collect(),
        reads: e.details.reads.iter().map(PlaceJson::from).collect(),
    }
}

/// The stop as text: the status and message, then one line per group of
/// lanes (consecutive warps whose lanes do the same at the same place
/// share a line), then the reads.
pub fn text(status: &str, s: &StopJson) -> String {
    let mut out = String::new();
    let at = s.at.as_ref().map_or_else(String::new, |p| format!("{p}: "));
    let _ = writeln!(out, "stopped ({status}): {at}{}", s.message);
    let mut rows: Vec<(&LanesJson, u32)> = Vec::new();
    for g in &s.warps {
        match rows.last_mut() {
            Some((first, last))
                if *last + 1 == g.warp
                    && (
                        first.block,
                        &first.lanes,
                        first.state,
                        &first.at,
                        &first.in_loop,
                    ) == (g.block, &g.lanes, g.state, &g.at, &g.in_loop) =>
            {
                *last = g.warp
            }
            _ => rows.push((g, g.warp)),
        }
    }
    for (g, last) in rows {
        let [x, y, z] = g.block;
        let warps = match last == g.warp {
            true => format!("warp {}", g.warp),
            false => format!("warps {}-{last}", g.warp),
        };
        let _ = write!(
            out,
            "  block ({x},{y},{z}) {warps} lanes {}: {}",
            g.lanes, g.state
        );
        if let Some(p) = &g.at {
            let _ = write!(out, " at {p}");
        }
        if let Some(l) = &g.in_loop {
            let _ = write!(out, ", in the loop at {l}");
        }
        out.push('\n');
    }
    if !s.reads.is_empty() {
        let reads: Vec<String> = s.reads.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "  reads: {}", reads.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(line: u32) -> Option<PlaceJson> {
        Some(PlaceJson {
            file: "k.cu".into(),
            line,
            column: 3,
        })
    }

    fn lanes(warp: u32, state: &'static str, line: u32) -> LanesJson {
        LanesJson {
            block: [0, 0, 0],
            warp,
            lanes: "0-31".into(),
            state,
            at: place(line),
            in_loop: None,
        }
    }

    #[test]
    fn warps_alike_share_a_line() {
        let s = StopJson {
            message: "step limit".into(),
            at: place(7),
            block: Some([0, 0, 0]),
            thread: None,
            address: None,
            warps: vec![
                LanesJson {
                    in_loop: place(6),
                    ..lanes(0, "running", 7)
                },
                lanes(1, "running", 2),
                lanes(2, "running", 2),
                lanes(3, "running", 2),
            ],
            reads: vec![],
        };
        assert_eq!(
            text("step-limit", &s),
            "stopped (step-limit): k.cu:7:3: step limit\n\
             \x20 block (0,0,0) warp 0 lanes 0-31: running at k.cu:7:3, in the loop at k.cu:6:3\n\
             \x20 block (0,0,0) warps 1-3 lanes 0-31: running at k.cu:2:3\n"
        );
        let v = serde_json::to_value(&s.warps[0]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"block": [0, 0, 0], "warp": 0, "lanes": "0-31", "state": "running",
                "file": "k.cu", "line": 7, "column": 3,
                "loop": {"file": "k.cu", "line": 6, "column": 3}})
        );
    }
}
