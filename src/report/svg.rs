//! A small SVG layer for the HTML reports: axes (linear, log10 and the percentile
//! "nines" axis), line and marker series, shaded bands, grouped bars and legends.
//!
//! It is deliberately tiny and string-based: no dependency, no script, and output
//! that a test can count. Every series is one `<g class="series" data-series=…
//! data-count=N>`; when N ≤ [`MARKER_LIMIT`] each point is also its own element
//! with class `pt` (with a tooltip), otherwise the series is a single `<path>` with
//! exactly N vertices (one `M`/`L` command per point) so a one-hour run at one-second
//! intervals stays small. The trade-off: no interactivity beyond native tooltips.
//! Charts only place numbers they are given; they never compute statistics.
//! Reference lines ([`Rule`]), markers and shaded bands are drawn at values the
//! caller read from the result (an SLA bound, a judged window), not derived here.

use std::fmt::Write;

use super::format::{coord, esc, trim_zeros};

/// Series colours: distinguishable for common colour-vision deficiencies.
pub(crate) const PALETTE: [&str; 8] = [
    "#1f77b4", "#e6780b", "#2a9d3a", "#9467bd", "#8c564b", "#d6279b", "#5f6b73", "#17a2b8",
];

/// Above this many points a series is drawn as one path, without per-point markers.
pub const MARKER_LIMIT: usize = 500;

/// How data values map onto an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Proportional; starts at zero so heights compare honestly.
    Linear,
    /// Decades; values ≤ 0 are pinned to the bottom of the axis.
    Log10,
    /// Percentiles placed at -log10(1 - p/100): 90 → 1, 99 → 2, 99.9 → 3. The
    /// 100th percentile (the maximum) sits at the right end of the axis.
    Nines,
    /// Powers of two (block sizes, queue depths); ticks at every power in range.
    Log2,
}

/// How tick labels of a [`Scale::Log2`] axis are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickUnit {
    /// Plain numbers: 1, 2, 4, … 1024.
    Count,
    /// Binary sizes: 512, 4k, 64k, 1M (k = 1024 bytes).
    Bytes,
}

/// One axis: its scale, its range in transformed units, and its label (with unit).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub scale: Scale,
    /// Lower end, in transformed units (data units for linear, log10 for log, nines).
    pub lo: f64,
    /// Upper end, in transformed units.
    pub hi: f64,
    /// Axis title including the unit, e.g. "latency (µs)".
    pub label: String,
    /// Label for the last nines tick when it stands for the maximum (p100).
    max_tick: bool,
    /// How log2 tick labels are written.
    unit: TickUnit,
}

impl Axis {
    /// A linear axis from zero to a rounded-up maximum of `values`.
    pub fn linear(label: &str, values: impl IntoIterator<Item = f64>) -> Axis {
        let mut lo = 0.0f64;
        let mut hi = 0.0f64;
        for v in values.into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if hi <= lo {
            hi = lo + 1.0;
        }
        let step = nice_step((hi - lo) / 5.0);
        Axis {
            scale: Scale::Linear,
            lo: (lo / step).floor() * step,
            hi: (hi / step).ceil() * step,
            label: label.into(),
            max_tick: false,
            unit: TickUnit::Count,
        }
    }

    /// A log10 axis covering whole decades around the positive `values`.
    pub fn log10(label: &str, values: impl IntoIterator<Item = f64>) -> Axis {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v.log10());
            hi = hi.max(v.log10());
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        let (mut lo, mut hi) = (lo.floor(), hi.ceil());
        if hi <= lo {
            hi = lo + 1.0;
        }
        if hi - lo > 12.0 {
            lo = hi - 12.0;
        }
        Axis {
            scale: Scale::Log10,
            lo,
            hi,
            label: label.into(),
            max_tick: false,
            unit: TickUnit::Count,
        }
    }

    /// Log10 when the values span more than `spread` times, otherwise linear from 0.
    pub fn auto(label: &str, values: &[f64], spread: f64) -> Axis {
        let pos = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0);
        let min = pos.clone().fold(f64::INFINITY, f64::min);
        let max = pos.fold(0.0, f64::max);
        if min.is_finite() && max / min > spread {
            Axis::log10(label, values.iter().copied())
        } else {
            Axis::linear(label, values.iter().copied())
        }
    }

    /// A percentile axis in nines, wide enough for every percentile below 100.
    pub fn nines(label: &str, percentiles: impl IntoIterator<Item = f64>) -> Axis {
        let mut most = 0.0f64;
        let mut has_max = false;
        for p in percentiles.into_iter().filter(|p| p.is_finite()) {
            if p >= 100.0 {
                has_max = true;
            } else {
                most = most.max(nines(p));
            }
        }
        // Leave room right of the last finite percentile; p100 is drawn at the end.
        let hi = if has_max {
            (most + 1e-9).floor() + 1.0
        } else {
            (most - 1e-9).ceil()
        }
        .max(2.0);
        Axis {
            scale: Scale::Nines,
            lo: 0.0,
            hi,
            label: label.into(),
            max_tick: has_max,
            unit: TickUnit::Count,
        }
    }

    /// A log2 axis over the positive `values`, a quarter power of two wider on each
    /// side so the end points do not sit on the frame.
    pub fn log2(label: &str, values: impl IntoIterator<Item = f64>, unit: TickUnit) -> Axis {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v.log2());
            hi = hi.max(v.log2());
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        Axis {
            scale: Scale::Log2,
            lo: lo - 0.25,
            hi: hi + 0.25,
            label: label.into(),
            max_tick: false,
            unit,
        }
    }

    /// The transformed value of `v` (unclamped, except p ≥ 100 on a nines axis).
    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log10 if v > 0.0 => v.log10(),
            Scale::Log10 => self.lo,
            Scale::Log2 if v > 0.0 => v.log2(),
            Scale::Log2 => self.lo,
            Scale::Nines if v >= 100.0 => self.hi,
            Scale::Nines => nines(v).min(self.hi),
        }
    }

    /// Position of `v` along the axis, 0 at `lo` and 1 at `hi`, clamped.
    pub fn frac(&self, v: f64) -> f64 {
        let f = (self.t(v) - self.lo) / (self.hi - self.lo);
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Tick positions (as fractions along the axis) and their labels.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let span = self.hi - self.lo;
        let mut out = Vec::new();
        match self.scale {
            Scale::Linear => {
                let step = nice_step(span / 5.0);
                let n = (span / step).round() as i64;
                for i in 0..=n {
                    let v = self.lo + i as f64 * step;
                    out.push(((v - self.lo) / span, si_label(v, step)));
                }
            }
            Scale::Log10 => {
                let decades = span.round() as i64;
                let mults: &[f64] = if decades <= 2 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                for d in 0..=decades {
                    for &m in mults {
                        let e = self.lo + d as f64;
                        let t = e + m.log10();
                        if t <= self.hi + 1e-9 {
                            let v = m * 10f64.powf(e);
                            out.push(((t - self.lo) / span, si_label(v, v)));
                        }
                    }
                }
            }
            Scale::Log2 => {
                let (first, last) = (self.lo.ceil() as i64, self.hi.floor() as i64);
                // At most about ten labels: every second (third, …) power when crowded.
                let every = ((last - first) / 10 + 1).max(1);
                for e in (first..=last).filter(|e| (e - first) % every == 0) {
                    let v = 2f64.powi(e as i32);
                    let label = match self.unit {
                        TickUnit::Count => si_label(v, 1.0),
                        TickUnit::Bytes => size_label(v),
                    };
                    out.push(((e as f64 - self.lo) / span, label));
                }
            }
            Scale::Nines => {
                out.push((0.0, "0".into()));
                out.push((nines(50.0) / span, "50".into()));
                let last = self.hi.round() as i64;
                for k in 1..=last {
                    let label = if k == last && self.max_tick {
                        "max".to_string()
                    } else {
                        percentile_label(k)
                    };
                    out.push((k as f64 / span, label));
                }
            }
        }
        out
    }
}

/// -log10(1 - p/100): the number of nines in percentile `p`.
pub fn nines(p: f64) -> f64 {
    -(1.0 - (p / 100.0).min(1.0 - 1e-12)).log10()
}

/// "90", "99", "99.9", … for k nines.
fn percentile_label(k: i64) -> String {
    match k {
        1 => "90".into(),
        k => format!("99.{}", "9".repeat((k - 2) as usize))
            .trim_end_matches('.')
            .to_string(),
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// A tick label with k/M/G suffixes and only the decimals the step needs.
fn si_label(v: f64, step: f64) -> String {
    let (div, suffix) = if v.abs() >= 1e9 {
        (1e9, "G")
    } else if v.abs() >= 1e6 {
        (1e6, "M")
    } else if v.abs() >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let s = (step / div).abs();
    let decimals = if s >= 1.0 || s == 0.0 {
        0
    } else {
        (-s.log10()).ceil().min(9.0) as usize
    };
    format!("{}{suffix}", trim_zeros(format!("{:.decimals$}", v / div)))
}

/// A binary size for a tick: 512, 4k, 64k, 1M, 2G.
pub fn size_label(bytes: f64) -> String {
    let units = [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "k")];
    for (div, suffix) in units {
        let div = div as f64;
        if bytes >= div {
            return format!("{}{suffix}", trim_zeros(format!("{:.2}", bytes / div)));
        }
    }
    trim_zeros(format!("{bytes:.0}"))
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A line through the points (with dots when there are few).
    Line,
    /// Only markers (e.g. intervals with errors), as small triangles.
    Flags,
    /// Only hollow squares, no line: points that belong to no line, such as the
    /// closed-loop max run of a latency curve. The legend shows a square.
    Squares,
    /// A line with the area under it filled down to the frame's bottom: the layers
    /// of a stacked chart, whose points are the running totals. Drawn in the order
    /// given, so the caller lists the tallest layer first and each lower one paints
    /// over it.
    Area,
}

/// One named series of (x, y) data points.
#[derive(Debug, Clone)]
pub struct Series {
    /// Machine name, written to `data-series` (e.g. "iops", "lat_p99_us").
    pub name: String,
    /// Legend text.
    pub label: String,
    pub color: String,
    pub mark: Mark,
    pub points: Vec<(f64, f64)>,
    /// Optional tooltip per point (same length as `points`); shown when few points.
    pub tips: Vec<String>,
    /// Dashed line (e.g. to tell the p99 line from the p50 line without colour).
    pub dashed: bool,
}

impl Series {
    pub fn line(name: &str, label: &str, color: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            label: label.into(),
            color: color.into(),
            mark: Mark::Line,
            points,
            tips: Vec::new(),
            dashed: false,
        }
    }
}

/// A shaded vertical band between two x values (e.g. warm-up).
#[derive(Debug, Clone)]
pub struct Band {
    /// Written to `data-band` and used as a CSS class.
    pub kind: String,
    pub label: String,
    pub x0: f64,
    pub x1: f64,
    pub color: String,
}

/// A shaded horizontal band between two y values (e.g. a tolerance around an average).
#[derive(Debug, Clone)]
pub struct HBand {
    /// Written to `data-band` and used as a CSS class.
    pub kind: String,
    pub label: String,
    pub y0: f64,
    pub y1: f64,
    pub color: String,
}

/// Where a reference line sits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RuleAt {
    /// A vertical line at this x value.
    X(f64),
    /// A horizontal line at this y value.
    Y(f64),
}

/// A labelled reference line across the plot (an SLA bound, an average). Not a
/// series: it is not counted and carries no `pt` elements.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Written to `data-rule`.
    pub kind: String,
    /// Text drawn next to the line.
    pub label: String,
    pub at: RuleAt,
    pub color: String,
    pub dashed: bool,
}

/// A single highlighted point (e.g. the rate an SLA search found), drawn as a
/// hollow diamond so the series points under it stay visible. Not a series and not
/// counted.
#[derive(Debug, Clone)]
pub struct Marker {
    /// Written to `data-marker`.
    pub kind: String,
    /// Tooltip text.
    pub label: String,
    pub x: f64,
    pub y: f64,
    pub color: String,
}

/// An x/y chart of line and marker series with optional bands.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Written to `data-chart`, so tests and styles can find the chart.
    pub id: String,
    pub title: String,
    pub width: f64,
    pub height: f64,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    pub hbands: Vec<HBand>,
    pub rules: Vec<Rule>,
    pub markers: Vec<Marker>,
}

const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 42.0;

struct Frame {
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
}

impl Frame {
    fn new(width: f64, height: f64) -> Frame {
        Frame {
            x0: LEFT,
            y0: TOP,
            w: (width - LEFT - RIGHT).max(10.0),
            h: (height - TOP - BOTTOM).max(10.0),
        }
    }
    fn px(&self, fx: f64) -> f64 {
        self.x0 + fx * self.w
    }
    fn py(&self, fy: f64) -> f64 {
        self.y0 + (1.0 - fy) * self.h
    }
}

fn open_svg(out: &mut String, id: &str, title: &str, width: f64, height: f64) {
    let _ = write!(
        out,
        r#"<figure class="chart" data-chart="{id}"><svg viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}"><text class="title" x="{LEFT}" y="18">{t}</text>"#,
        id = esc(id),
        w = coord(width),
        h = coord(height),
        t = esc(title),
    );
}

/// Grid lines, tick labels and the y-axis title; `x` is None for category charts.
fn axes(out: &mut String, f: &Frame, x: Option<&Axis>, y: &Axis, width: f64, height: f64) {
    out.push_str(r#"<g class="grid">"#);
    for (fy, label) in y.ticks() {
        let py = coord(f.py(fy));
        let _ = write!(
            out,
            r#"<line x1="{}" x2="{}" y1="{py}" y2="{py}"/><text class="yt" x="{}" y="{py}" dy="4">{}</text>"#,
            coord(f.x0),
            coord(f.x0 + f.w),
            coord(f.x0 - 6.0),
            esc(&label)
        );
    }
    if let Some(x) = x {
        for (fx, label) in x.ticks() {
            let px = coord(f.px(fx));
            let _ = write!(
                out,
                r#"<line x1="{px}" x2="{px}" y1="{}" y2="{}"/><text class="xt" x="{px}" y="{}">{}</text>"#,
                coord(f.y0),
                coord(f.y0 + f.h),
                coord(f.y0 + f.h + 15.0),
                esc(&label)
            );
        }
        let _ = write!(
            out,
            r#"<text class="xl" x="{}" y="{}">{}</text>"#,
            coord(f.x0 + f.w / 2.0),
            coord(height - 6.0),
            esc(&x.label)
        );
    }
    let _ = write!(
        out,
        r#"<rect class="frame" x="{}" y="{}" width="{}" height="{}"/><text class="yl" transform="translate(14 {}) rotate(-90)">{}</text></g>"#,
        coord(f.x0),
        coord(f.y0),
        coord(f.w),
        coord(f.h),
        coord(f.y0 + f.h / 2.0),
        esc(&y.label)
    );
    let _ = width;
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Glyph {
    /// A short line, dashed or not.
    Line { dashed: bool },
    /// A hollow square (a [`Mark::Squares`] series).
    Square,
}

/// Legend entries (label, colour, glyph) laid out right-aligned on the title line.
fn legend(out: &mut String, width: f64, items: &[(String, String, Glyph)]) {
    if items.is_empty() {
        return;
    }
    out.push_str(r#"<g class="legend">"#);
    let mut x = width - RIGHT;
    for (label, color, glyph) in items.iter().rev() {
        let text_w = 6.5 * label.chars().count() as f64;
        x -= text_w;
        let _ = write!(
            out,
            r#"<text x="{}" y="18">{}</text>"#,
            coord(x),
            esc(label)
        );
        x -= 20.0;
        match glyph {
            Glyph::Line { dashed } => {
                let dash = if *dashed {
                    r#" stroke-dasharray="4 3""#
                } else {
                    ""
                };
                let _ = write!(
                    out,
                    r#"<line x1="{}" x2="{}" y1="14" y2="14" stroke="{}" stroke-width="3"{dash}/>"#,
                    coord(x),
                    coord(x + 16.0),
                    esc(color)
                );
            }
            Glyph::Square => {
                let _ = write!(
                    out,
                    r#"<rect class="lg-square" x="{}" y="10" width="8" height="8" fill="none" stroke="{}" stroke-width="2"/>"#,
                    coord(x + 4.0),
                    esc(color)
                );
            }
        }
        x -= 12.0;
    }
    out.push_str("</g>");
}

impl Chart {
    /// A chart of the default report size.
    pub fn new(id: &str, title: &str, x: Axis, y: Axis) -> Chart {
        Chart {
            id: id.into(),
            title: title.into(),
            width: 860.0,
            height: 240.0,
            x,
            y,
            series: Vec::new(),
            bands: Vec::new(),
            hbands: Vec::new(),
            rules: Vec::new(),
            markers: Vec::new(),
        }
    }

    /// The chart as an inline `<figure><svg>…</svg></figure>` fragment.
    pub fn render(&self) -> String {
        let f = Frame::new(self.width, self.height);
        let mut out = String::new();
        open_svg(&mut out, &self.id, &self.title, self.width, self.height);
        for b in &self.bands {
            let (a, z) = (f.px(self.x.frac(b.x0)), f.px(self.x.frac(b.x1)));
            let _ = write!(
                out,
                r#"<rect class="band {k}" data-band="{k}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>"#,
                coord(a.min(z)),
                coord(f.y0),
                coord((z - a).abs()),
                coord(f.h),
                esc(&b.color),
                esc(&b.label),
                k = esc(&b.kind),
            );
        }
        for b in &self.hbands {
            let (a, z) = (f.py(self.y.frac(b.y0)), f.py(self.y.frac(b.y1)));
            let _ = write!(
                out,
                r#"<rect class="band {k}" data-band="{k}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>"#,
                coord(f.x0),
                coord(a.min(z)),
                coord(f.w),
                coord((z - a).abs()),
                esc(&b.color),
                esc(&b.label),
                k = esc(&b.kind),
            );
        }
        axes(
            &mut out,
            &f,
            Some(&self.x),
            &self.y,
            self.width,
            self.height,
        );
        for s in &self.series {
            self.render_series(&mut out, &f, s);
        }
        for r in &self.rules {
            self.render_rule(&mut out, &f, r);
        }
        for m in &self.markers {
            let (x, y) = (f.px(self.x.frac(m.x)), f.py(self.y.frac(m.y)));
            let _ = write!(
                out,
                r#"<path class="marker" data-marker="{}" d="M{} {}l8 8l-8 8l-8 -8z" fill="none" stroke="{}" stroke-width="2"><title>{}</title></path>"#,
                esc(&m.kind),
                coord(x),
                coord(y - 8.0),
                esc(&m.color),
                esc(&m.label)
            );
        }
        let mut items: Vec<(String, String, Glyph)> = self
            .series
            .iter()
            .map(|s| {
                let glyph = match s.mark {
                    Mark::Squares => Glyph::Square,
                    Mark::Line | Mark::Flags | Mark::Area => Glyph::Line { dashed: s.dashed },
                };
                (s.label.clone(), s.color.clone(), glyph)
            })
            .collect();
        let mut seen = Vec::new();
        let band_kinds = self.bands.iter().map(|b| (&b.kind, &b.label, &b.color));
        let hband_kinds = self.hbands.iter().map(|b| (&b.kind, &b.label, &b.color));
        for (kind, label, color) in band_kinds.chain(hband_kinds) {
            if !seen.contains(kind) {
                seen.push(kind.clone());
                items.push((label.clone(), color.clone(), Glyph::Line { dashed: false }));
            }
        }
        legend(&mut out, self.width, &items);
        out.push_str("</svg></figure>\n");
        out
    }

    /// A reference line across the frame with its label: a horizontal line's label
    /// sits above its left end (where load curves are usually low), a vertical line's
    /// at its top, on the side with more room.
    fn render_rule(&self, out: &mut String, f: &Frame, r: &Rule) {
        let dash = if r.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let color = esc(&r.color);
        let _ = write!(
            out,
            r#"<g class="rule" data-rule="{}" stroke="{color}" fill="{color}">"#,
            esc(&r.kind)
        );
        match r.at {
            RuleAt::Y(v) => {
                let y = coord(f.py(self.y.frac(v)));
                let _ = write!(
                    out,
                    r#"<line x1="{}" x2="{}" y1="{y}" y2="{y}" stroke-width="1.5"{dash}/><text class="rl" x="{}" y="{y}" dy="-4" stroke="none">{}</text>"#,
                    coord(f.x0),
                    coord(f.x0 + f.w),
                    coord(f.x0 + 4.0),
                    esc(&r.label)
                );
            }
            RuleAt::X(v) => {
                let fx = self.x.frac(v);
                let x = f.px(fx);
                let (tx, anchor) = if fx > 0.7 {
                    (x - 4.0, "end")
                } else {
                    (x + 4.0, "start")
                };
                let _ = write!(
                    out,
                    r#"<line x1="{x}" x2="{x}" y1="{}" y2="{}" stroke-width="1.5"{dash}/><text class="rl" x="{}" y="{}" text-anchor="{anchor}" stroke="none">{}</text>"#,
                    coord(f.y0),
                    coord(f.y0 + f.h),
                    coord(tx),
                    coord(f.y0 + 12.0),
                    esc(&r.label),
                    x = coord(x),
                );
            }
        }
        out.push_str("</g>");
    }

    fn render_series(&self, out: &mut String, f: &Frame, s: &Series) {
        let n = s.points.len();
        let color = esc(&s.color);
        let _ = write!(
            out,
            r#"<g class="series {m}" data-series="{}" data-count="{n}" stroke="{color}" fill="{color}">"#,
            esc(&s.name),
            m = match s.mark {
                Mark::Line => "line",
                Mark::Flags => "flags",
                Mark::Squares => "squares",
                Mark::Area => "area",
            }
        );
        let pos: Vec<(String, String)> = s
            .points
            .iter()
            .map(|&(x, y)| (coord(f.px(self.x.frac(x))), coord(f.py(self.y.frac(y)))))
            .collect();
        if s.mark == Mark::Area && n > 0 {
            // The fill is a polygon (no `d`): the series' path keeps exactly N vertices.
            let bottom = coord(f.y0 + f.h);
            let mut pts = format!("{},{bottom}", pos[0].0);
            for (x, y) in &pos {
                let _ = write!(pts, " {x},{y}");
            }
            let _ = write!(pts, " {},{bottom}", pos[n - 1].0);
            let _ = write!(
                out,
                r#"<polygon class="area" points="{pts}" fill-opacity="0.75" stroke="none"/>"#
            );
        }
        match s.mark {
            Mark::Line | Mark::Area => {
                if n > 0 {
                    let mut d = String::with_capacity(n * 12);
                    for (i, (x, y)) in pos.iter().enumerate() {
                        d.push(if i == 0 { 'M' } else { 'L' });
                        d.push_str(x);
                        d.push(' ');
                        d.push_str(y);
                    }
                    let dash = if s.dashed {
                        r#" stroke-dasharray="5 3""#
                    } else {
                        ""
                    };
                    let _ = write!(out, r#"<path class="ln" fill="none" d="{d}"{dash}/>"#);
                }
                if n <= MARKER_LIMIT {
                    let r = if n > 120 { "1.5" } else { "2.5" };
                    for (i, (x, y)) in pos.iter().enumerate() {
                        let _ = write!(out, r#"<circle class="pt" cx="{x}" cy="{y}" r="{r}">"#);
                        tip(out, s, i);
                        out.push_str("</circle>");
                    }
                }
            }
            Mark::Flags => {
                if n <= MARKER_LIMIT {
                    for (i, (x, y)) in pos.iter().enumerate() {
                        let _ = write!(out, r#"<path class="pt" d="M{x} {y}l-4 -8h8z">"#);
                        tip(out, s, i);
                        out.push_str("</path>");
                    }
                } else {
                    let mut d = String::with_capacity(n * 20);
                    for (x, y) in &pos {
                        let _ = write!(d, "M{x} {y}l-4 -8h8z");
                    }
                    let _ = write!(out, r#"<path class="flagpath" d="{d}"/>"#);
                }
            }
            Mark::Squares => {
                // Few points by nature; every one is its own element with its tip.
                for (i, (x, y)) in pos.iter().enumerate() {
                    let _ = write!(
                        out,
                        r#"<path class="pt" d="M{x} {y}m-5 -5h10v10h-10z" fill="none" stroke-width="2">"#
                    );
                    tip(out, s, i);
                    out.push_str("</path>");
                }
            }
        }
        out.push_str("</g>");
    }
}

fn tip(out: &mut String, s: &Series, i: usize) {
    if let Some(t) = s.tips.get(i) {
        let _ = write!(out, "<title>{}</title>", esc(t));
    }
}

/// Grouped vertical bars: one group per category, one bar per series.
#[derive(Debug, Clone)]
pub struct BarChart {
    pub id: String,
    pub title: String,
    pub width: f64,
    pub height: f64,
    pub categories: Vec<String>,
    /// Each series' points are (category index, value).
    pub series: Vec<Series>,
    pub y: Axis,
}

impl BarChart {
    /// The chart as an inline `<figure><svg>…</svg></figure>` fragment.
    pub fn render(&self) -> String {
        let f = Frame::new(self.width, self.height);
        let mut out = String::new();
        open_svg(&mut out, &self.id, &self.title, self.width, self.height);
        axes(&mut out, &f, None, &self.y, self.width, self.height);
        let cats = self.categories.len().max(1) as f64;
        let slot = f.w / cats;
        let nser = self.series.len().max(1) as f64;
        let bar_w = (slot * 0.8 / nser).clamp(1.0, 48.0);
        let pad = (slot - bar_w * nser) / 2.0;
        let max_chars = ((slot / 6.5).floor() as usize).max(3);
        out.push_str(r#"<g class="cats">"#);
        for (i, c) in self.categories.iter().enumerate() {
            let short: String = if c.chars().count() > max_chars {
                let mut s: String = c.chars().take(max_chars.saturating_sub(1)).collect();
                s.push('…');
                s
            } else {
                c.clone()
            };
            let _ = write!(
                out,
                r#"<text class="xt" x="{}" y="{}">{}<title>{}</title></text>"#,
                coord(f.x0 + slot * (i as f64 + 0.5)),
                coord(f.y0 + f.h + 15.0),
                esc(&short),
                esc(c)
            );
        }
        out.push_str("</g>");
        let base = f.py(self.y.frac(0.0));
        for (si, s) in self.series.iter().enumerate() {
            let color = esc(&s.color);
            let _ = write!(
                out,
                r#"<g class="series bars" data-series="{}" data-count="{}" fill="{color}">"#,
                esc(&s.name),
                s.points.len()
            );
            for (i, &(cat, v)) in s.points.iter().enumerate() {
                let x = f.x0 + slot * cat + pad + bar_w * si as f64;
                let top = f.py(self.y.frac(v));
                let _ = write!(
                    out,
                    r#"<rect class="pt" x="{}" y="{}" width="{}" height="{}">"#,
                    coord(x),
                    coord(top.min(base)),
                    coord(bar_w),
                    coord((base - top).abs())
                );
                tip(&mut out, s, i);
                out.push_str("</rect>");
            }
            out.push_str("</g>");
        }
        let items: Vec<(String, String, Glyph)> = self
            .series
            .iter()
            .map(|s| {
                (
                    s.label.clone(),
                    s.color.clone(),
                    Glyph::Line { dashed: false },
                )
            })
            .collect();
        if items.len() > 1 {
            legend(&mut out, self.width, &items);
        }
        out.push_str("</svg></figure>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::linear("iops", [0.0, 87_000.0]);
        assert_eq!(a.lo, 0.0);
        assert_eq!(a.hi, 100_000.0);
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0", "20k", "40k", "60k", "80k", "100k"]);
        let b = Axis::linear("mb/s", [0.37]);
        let labels: Vec<String> = b.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels.last().unwrap(), "0.4");
    }

    #[test]
    fn log_ticks_cover_decades() {
        let a = Axis::log10("lat", [80.0, 12_000.0]);
        assert_eq!((a.lo, a.hi), (1.0, 5.0));
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["10", "100", "1000", "10k", "100k"]);
        assert!(a.frac(0.0) == 0.0, "non-positive values pin to the bottom");
    }

    #[test]
    fn nines_axis_labels() {
        let a = Axis::nines("pct", [0.0, 50.0, 99.0, 99.9, 100.0]);
        assert_eq!(a.hi, 4.0);
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0", "50", "90", "99", "99.9", "max"]);
        let b = Axis::nines("pct", [99.99]);
        let labels: Vec<String> = b.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels.last().unwrap(), "99.99");
        assert!((a.frac(99.0) - 0.5).abs() < 1e-9);
        assert_eq!(a.frac(100.0), 1.0);
    }

    #[test]
    fn long_series_is_one_path_with_n_vertices() {
        let pts: Vec<(f64, f64)> = (0..1000).map(|i| (i as f64, (i % 7) as f64)).collect();
        let mut c = Chart::new(
            "t",
            "t",
            Axis::linear("s", [0.0, 1000.0]),
            Axis::linear("v", [7.0]),
        );
        c.series.push(Series::line("v", "v", "#000", pts));
        let svg = c.render();
        assert!(svg.contains(r#"data-count="1000""#));
        assert!(!svg.contains(r#"class="pt""#));
        let d = svg
            .split(r#" d=""#)
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(d.matches(['M', 'L']).count(), 1000);
    }

    #[test]
    fn log2_axis_labels_sizes_and_counts() {
        let a = Axis::log2("bs", [4096.0, 65536.0, 1048576.0], TickUnit::Bytes);
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(
            labels,
            ["4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1M"]
        );
        // The end points sit inside the frame, not on it.
        assert!(a.frac(4096.0) > 0.0 && a.frac(1048576.0) < 1.0);
        let q = Axis::log2("qd", (0..=12).map(|e| 2f64.powi(e)), TickUnit::Count);
        let labels: Vec<String> = q.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["1", "4", "16", "64", "256", "1024", "4096"]);
        assert_eq!(size_label(512.0), "512");
        assert_eq!(size_label(1536.0), "1.5k");
    }

    #[test]
    fn rules_bands_and_markers_are_not_series() {
        let mut c = Chart::new(
            "t",
            "t",
            Axis::linear("x", [0.0, 10.0]),
            Axis::linear("y", [0.0, 10.0]),
        );
        c.series
            .push(Series::line("v", "v", "#000", vec![(1.0, 1.0), (9.0, 9.0)]));
        c.rules.push(Rule {
            kind: "bound".into(),
            label: "p99 ≤ 5 µs".into(),
            at: RuleAt::Y(5.0),
            color: "#f00".into(),
            dashed: true,
        });
        c.rules.push(Rule {
            kind: "rate".into(),
            label: "9 IOPS".into(),
            at: RuleAt::X(9.0),
            color: "#f00".into(),
            dashed: true,
        });
        c.hbands.push(HBand {
            kind: "tol".into(),
            label: "tolerance".into(),
            y0: 4.0,
            y1: 6.0,
            color: "#0f0".into(),
        });
        c.markers.push(Marker {
            kind: "m".into(),
            label: "here".into(),
            x: 9.0,
            y: 5.0,
            color: "#f00".into(),
        });
        let svg = c.render();
        assert_eq!(svg.matches("class=\"pt\"").count(), 2);
        assert_eq!(svg.matches("<g class=\"series").count(), 1);
        assert!(svg.contains("data-rule=\"bound\"") && svg.contains(">p99 ≤ 5 µs</text>"));
        // A vertical rule near the right edge puts its label on the left.
        assert!(svg.contains("text-anchor=\"end\" stroke=\"none\">9 IOPS"));
        assert!(svg.contains("data-band=\"tol\"") && svg.contains(">tolerance</text>"));
        assert!(svg.contains("data-marker=\"m\""));
    }
}
