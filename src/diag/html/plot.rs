//! A small SVG line chart: a static bound against simulated figures over
//! a parameter sweep. Written by hand so the report needs no script or
//! network asset; the chart is plain SVG that any browser draws.

use std::fmt::Write;

/// One series: a label, a colour and its points (`None` where the value
/// is missing at that x).
pub struct Series<'a> {
    pub label: &'a str,
    pub color: &'a str,
    /// Joined by a line (a bound) or drawn as separate marks (measurements).
    pub line: bool,
    pub values: Vec<Option<f64>>,
}

/// The chart's frame.
pub struct Chart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub xs: &'a [f64],
    pub series: Vec<Series<'a>>,
}

const W: f64 = 420.0;
const H: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 46.0;
const BOTTOM: f64 = 44.0;

/// Whether the x values grow geometrically (a doubling sweep): then the
/// axis is logarithmic so the points are evenly spaced.
fn logarithmic(xs: &[f64]) -> bool {
    xs.len() > 2 && xs.iter().all(|&x| x > 0.0) && xs.windows(2).all(|w| w[1] >= 1.5 * w[0])
}

/// A round step for about `n` ticks over `[0, max]`.
fn tick_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|k| k * mag)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * mag)
}

/// The x axis's title, saying when its scale is logarithmic.
fn x_axis(label: &str, log: bool) -> String {
    if log {
        format!("{label} (log₂ scale)")
    } else {
        label.to_string()
    }
}

/// A number as a tick label: integers plainly, large ones with a suffix.
fn label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.3}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.3}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v}")
    } else {
        format!("{v:.2}")
    }
    .replace(".000", "")
}

/// A coordinate with at most one decimal and no trailing `.0`: the page
/// of a large project holds thousands of them.
fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// The chart as an `<svg>` element, compact: shared styling lives in the
/// page's stylesheet (`.plot …` rules), the grid and each series' marks
/// are one path each.
pub fn svg(c: &Chart) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="plot" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img"><title>{t}</title><text x="{}" y="16" class="pt">{t}</text>"#,
        n(W / 2.0),
        t = super::escape(c.title)
    );
    let ymax = c
        .series
        .iter()
        .flat_map(|se| se.values.iter().flatten().copied())
        .fold(0.0f64, f64::max);
    let step = tick_step(if ymax > 0.0 { ymax } else { 1.0 }, 4.0);
    let top = (ymax / step).ceil().max(1.0) * step;
    let log = logarithmic(c.xs);
    let fx = |x: f64| if log { x.log2() } else { x };
    let (x0, x1) =
        c.xs.iter()
            .map(|&x| fx(x))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
    let span = if x1 > x0 { x1 - x0 } else { 1.0 };
    let px = |x: f64| LEFT + (fx(x) - x0) / span * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - y / top * (H - TOP - BOTTOM);
    // Grid lines and their labels.
    let (mut grid, mut ticks) = (String::new(), String::new());
    let mut y = 0.0;
    while y <= top + step / 2.0 {
        let _ = write!(grid, "M{LEFT} {}H{}", n(py(y)), n(W - RIGHT));
        let _ = write!(
            ticks,
            r#"<text x="{}" y="{}">{}</text>"#,
            n(LEFT - 6.0),
            n(py(y) + 4.0),
            label(y)
        );
        y += step;
    }
    let _ = write!(
        s,
        r#"<path class="grid" d="{grid}"/><g class="yt">{ticks}</g><g class="xt">"#
    );
    for &x in c.xs {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}">{}</text>"#,
            n(px(x)),
            n(H - BOTTOM + 16.0),
            label(x)
        );
    }
    let _ = write!(
        s,
        r#"</g><path class="ax" d="M{LEFT} {TOP}V{b}H{r}"/><text x="{cx}" y="{ly}" class="axis">{xl}</text>"#,
        b = n(H - BOTTOM),
        r = n(W - RIGHT),
        cx = n((LEFT + W - RIGHT) / 2.0),
        ly = n(H - 8.0),
        xl = super::escape(&x_axis(c.x_label, log))
    );
    for (i, se) in c.series.iter().enumerate() {
        let pts: Vec<(f64, f64)> =
            c.xs.iter()
                .zip(&se.values)
                .filter_map(|(&x, v)| v.map(|v| (px(x), py(v))))
                .collect();
        if se.line && pts.len() > 1 {
            let d: Vec<String> = pts
                .iter()
                .map(|&(x, y)| format!("{},{}", n(x), n(y)))
                .collect();
            let _ = write!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2.5"/>"#,
                d.join(" "),
                se.color
            );
        }
        // Marks: a bound's squares, a measurement's dots (zero-length
        // strokes with round caps), one path per series.
        let marks: String = pts
            .iter()
            .map(|&(x, y)| {
                if se.line {
                    format!("M{} {}h7v7h-7z", n(x - 3.5), n(y - 3.5))
                } else {
                    format!("M{} {}h0", n(x), n(y))
                }
            })
            .collect();
        if !marks.is_empty() {
            if se.line {
                let _ = write!(s, r#"<path class="mark" d="{marks}" fill="{}"/>"#, se.color);
            } else {
                let _ = write!(
                    s,
                    r#"<path class="mark dot" d="{marks}" stroke="{}"/>"#,
                    se.color
                );
            }
        }
        // Legend: one row under the title, above the plot area.
        let lx = LEFT + 170.0 * i as f64;
        let _ = write!(
            s,
            r#"<rect x="{}" y="24" width="10" height="10" fill="{}"/><text x="{}" y="33" class="legend">{}</text>"#,
            n(lx),
            se.color,
            n(lx + 14.0),
            super::escape(se.label)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(147.0, 4.0), 50.0);
        assert_eq!(tick_step(9.0, 4.0), 5.0);
        assert_eq!(tick_step(1.0, 4.0), 0.5);
    }

    #[test]
    fn doubling_sweeps_get_a_log_axis() {
        assert_eq!(x_axis("n", true), "n (log₂ scale)");
        assert_eq!(x_axis("n", false), "n");
        assert!(logarithmic(&[32.0, 64.0, 128.0]));
        assert!(!logarithmic(&[1.0, 2.0, 3.0, 4.0]));
    }

    #[test]
    fn one_mark_per_present_point_and_a_line_for_the_bound() {
        let xs = [32.0, 64.0, 128.0];
        let c = Chart {
            title: "steps <per warp>",
            x_label: "n",
            xs: &xs,
            series: vec![
                Series {
                    label: "bound",
                    color: "#c0392b",
                    line: true,
                    values: vec![Some(10.0), Some(20.0), Some(40.0)],
                },
                Series {
                    label: "simulated",
                    color: "#2471a3",
                    line: false,
                    values: vec![Some(8.0), None, Some(30.0)],
                },
            ],
        };
        let s = svg(&c);
        assert_eq!(s.matches("<polyline").count(), 1);
        // Three bound squares and two dots (the missing point has none).
        assert_eq!(s.matches("h7v7h-7z").count(), 3);
        assert_eq!(s.matches("h0").count(), 2);
        assert!(s.contains("steps &lt;per warp&gt;"));
        // The y axis runs to the largest value, 40, in round steps of 10.
        assert!(s.contains(">40</text>") && s.contains(">10</text>"));
        assert!(!s.contains(">50</text>"));
    }

    #[test]
    fn coordinates_are_short() {
        assert_eq!(n(216.0), "216");
        assert_eq!(n(159.33333), "159.3");
        assert_eq!(n(60.5), "60.5");
        assert_eq!(n(-0.04), "-0");
    }
}
