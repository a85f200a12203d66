//! How a workload walks its working set: sequential or random access, the spread of
//! random offsets (with its text form, `zipf:1.2`, `zoned:80/10:20/90`), how
//! sequential streams share the set, and whether it discards. These are the words
//! both the plan and the result's workload echo use; the trade-off is that the
//! distribution's text form lives here too (it needs nothing but the type), while
//! fio's `rw` words beyond the trim modes stay with their readers in `plan`.

use super::skip::is_false;
use serde::{Deserialize, Serialize};

/// Whether and how a workload discards (fio's `rw=trim|randtrim|trimwrite|
/// randtrimwrite`). Its reads and writes follow `read_pct` as ever; a trim workload
/// has `read_pct` 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrimMode {
    /// No trims (every workload that is not one of the others).
    #[default]
    None,
    /// Every operation discards its range (fio's `trim`, `randtrim`).
    Only,
    /// Each range is discarded, then written once the discard has completed (fio's
    /// `trimwrite`, `randtrimwrite`): a trim and a write per offset.
    ThenWrite,
}

impl TrimMode {
    pub fn is_none(&self) -> bool {
        *self == TrimMode::None
    }

    /// fio's word for a pattern with this mode (`randtrim`, `trimwrite`), or `None`
    /// for a workload without trims.
    pub fn rw_word(self, pattern: &AccessPattern) -> Option<&'static str> {
        let random = matches!(pattern, AccessPattern::Random);
        match (self, random) {
            (TrimMode::None, _) => None,
            (TrimMode::Only, false) => Some("trim"),
            (TrimMode::Only, true) => Some("randtrim"),
            (TrimMode::ThenWrite, false) => Some("trimwrite"),
            (TrimMode::ThenWrite, true) => Some("randtrimwrite"),
        }
    }

    /// The access word's pattern and mode, for the trim words only.
    pub fn parse_rw(word: &str) -> Option<(AccessPattern, TrimMode)> {
        Some(match word {
            "trim" => (AccessPattern::Sequential, TrimMode::Only),
            "randtrim" => (AccessPattern::Random, TrimMode::Only),
            "trimwrite" => (AccessPattern::Sequential, TrimMode::ThenWrite),
            "randtrimwrite" => (AccessPattern::Random, TrimMode::ThenWrite),
            _ => return None,
        })
    }
}

/// How the offsets of successive I/Os are chosen (`{"kind": "random"}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AccessPattern {
    /// Each stream walks its own slice of the working set from start to end, wrapping.
    Sequential,
    /// Uniformly random block-aligned offsets over the working set (spread by the
    /// workload's `dist`).
    #[default]
    Random,
}

/// How random offsets are spread over the working set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Distribution {
    /// Every block equally likely.
    #[default]
    Uniform,
    /// Zipf with exponent `theta` (> 0, ≠ 1 allowed either side): block of rank k is
    /// chosen with probability ∝ 1/k^θ. Ranks are scattered over the range.
    Zipf { theta: f64 },
    /// Pareto with parameter `h` in (0, 1), as fio's pareto:h.
    Pareto { h: f64 },
    /// Hot bands: each band sends `io_pct` of the I/O to the next `range_pct` of the
    /// working set, in order (fio's zoned distribution, vdbench's hotband).
    Zoned { bands: Vec<Zone> },
    /// A fixed order of block indices, repeated (fio's `sequence:2,0,1`): the n-th
    /// I/O of a direction goes to `blocks[n % len]`. With `stride`, each repetition
    /// moves on by the sequence's length (2,0,1, 5,3,4, …), and the stream ends when
    /// the next index is past the working set, as fio's job does.
    Sequence {
        blocks: Vec<u64>,
        #[serde(default, skip_serializing_if = "is_false")]
        stride: bool,
    },
    /// Hot bands of absolute length (fio's `zoned_abs`, vdbench's cache-hit area):
    /// each band sends `io_pct` of the I/O to the next `bytes` of the working set,
    /// in order; a band of 0 bytes takes the rest of the set. Bands past the set's
    /// end are cut there.
    #[serde(rename = "zoned_abs")]
    ZonedBytes { bands: Vec<ZoneBytes> },
    /// vdbench's `hotband=`: its cache-access curve over the working set, which
    /// sends most I/O to the band's first bytes (8.7 % to its first 16 KB, a third
    /// to its first MB) and the rest ever more thinly to its end (`run::hotband`).
    #[serde(rename = "vdbench_hotband")]
    VdbenchHotband,
}

impl Distribution {
    /// The text form [`Distribution::parse`] reads back (`zipf:1.2`, `zoned:80/10:20/90`).
    pub fn spec(&self) -> String {
        match self {
            Distribution::Uniform => "uniform".into(),
            Distribution::Zipf { theta } => format!("zipf:{theta}"),
            Distribution::Pareto { h } => format!("pareto:{h}"),
            Distribution::Zoned { bands } => {
                let parts: Vec<String> = bands
                    .iter()
                    .map(|z| format!("{}/{}", z.io_pct, z.range_pct))
                    .collect();
                format!("zoned:{}", parts.join(":"))
            }
            Distribution::ZonedBytes { bands } => {
                let parts: Vec<String> = (bands.iter())
                    .map(|z| match z.bytes {
                        0 => format!("{}/", z.io_pct),
                        b => format!("{}/{b}", z.io_pct),
                    })
                    .collect();
                format!("zoned_abs:{}", parts.join(":"))
            }
            Distribution::Sequence { blocks, stride } => {
                let list: Vec<String> = blocks.iter().map(u64::to_string).collect();
                let tail = if *stride { ":stride" } else { "" };
                format!("sequence:{}{tail}", list.join(","))
            }
            Distribution::VdbenchHotband => "vdbench_hotband".into(),
        }
    }

    /// Parses an offset distribution: "uniform", "zipf:1.2", "pareto:0.9",
    /// "zoned:80/10:20/90" (I/O % / range % per band, in order), "sequence:2,0,1"
    /// (block indices in order, repeated), "sequence:2,0,1:stride" (each repetition
    /// moves on by the sequence's length) or "vdbench_hotband" (vdbench's curve).
    pub fn parse(text: &str) -> Result<Distribution, DistributionError> {
        Distribution::parse_with(text, &|s: &str| s.trim().parse::<u64>().ok())
    }

    /// [`Distribution::parse`], with `size` reading the byte lengths of
    /// `zoned_abs:IO%/SIZE:…` (a plain byte count without it; the plan's size
    /// parser, `4m`, from the job file and the command line). A band without a size
    /// (`zoned_abs:20/1m:80/`) takes the rest of the working set.
    pub fn parse_with(
        text: &str,
        size: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<Distribution, DistributionError> {
        let (kind, arg) = text.split_once(':').unwrap_or((text, ""));
        let num = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
        match kind.to_ascii_lowercase().as_str() {
            "uniform" | "random" if arg.is_empty() => Ok(Distribution::Uniform),
            "zipf" => match num(arg) {
                Some(theta) if theta > 0.0 => Ok(Distribution::Zipf { theta }),
                _ => Err(DistributionError::Zipf),
            },
            "pareto" => match num(arg) {
                Some(h) if h > 0.0 && h < 1.0 => Ok(Distribution::Pareto { h }),
                _ => Err(DistributionError::Pareto),
            },
            "zoned" | "hotband" => {
                let mut bands = Vec::new();
                for part in arg.split(':') {
                    let (io, range) = part
                        .split_once('/')
                        .ok_or_else(|| DistributionError::BandShape(part.to_string()))?;
                    match (num(io), num(range)) {
                        (Some(io_pct), Some(range_pct)) if io_pct >= 0.0 && range_pct > 0.0 => {
                            bands.push(Zone { io_pct, range_pct })
                        }
                        _ => return Err(DistributionError::BandNumbers(part.to_string())),
                    }
                }
                let io: f64 = bands.iter().map(|b| b.io_pct).sum();
                let range: f64 = bands.iter().map(|b| b.range_pct).sum();
                if (io - 100.0).abs() > 0.01 || (range - 100.0).abs() > 0.01 {
                    return Err(DistributionError::BandSums { io, range });
                }
                Ok(Distribution::Zoned { bands })
            }
            "zoned_abs" => parse_zoned_bytes(arg, size),
            "sequence" => parse_sequence(arg),
            "vdbench_hotband" if arg.is_empty() => Ok(Distribution::VdbenchHotband),
            _ => Err(DistributionError::Unknown),
        }
    }
}

impl Distribution {
    /// Hot bands from ranges laid end to end from the working set's start, each
    /// (I/O %, length in units of which the set holds `span`), as diskspd's
    /// `-rdpct` (`span` 100) and `-rdabs` (`span` the set's bytes) give them: a range
    /// past the end is cut there and those after it dropped; the I/O left over goes
    /// to the rest of the set, or to the last range when the ranges cover it all.
    /// diskspd's reader and ioscope's profile writer both go through this, so a
    /// profile's ranges are written only when they read back as the same bands.
    pub fn from_ranges(ranges: &[(u64, u64)], span: f64) -> Distribution {
        Distribution::laid_end_to_end(ranges.iter().map(|&(io, r)| (io as f64, r)), span)
    }

    /// [`Distribution::from_ranges`] with the I/O shares as numbers of their own
    /// (zoned_abs bands carry fractions).
    fn laid_end_to_end(ranges: impl IntoIterator<Item = (f64, u64)>, span: f64) -> Distribution {
        let mut bands = Vec::new();
        let (mut io_left, mut range_left) = (100.0, 100.0);
        for (io_pct, range) in ranges {
            let range_pct = (range as f64 / span * 100.0).min(range_left);
            if range_pct <= 0.0 {
                break;
            }
            bands.push(Zone { io_pct, range_pct });
            io_left -= io_pct;
            range_left -= range_pct;
        }
        if range_left > 0.0 {
            bands.push(Zone {
                io_pct: f64::max(io_left, 0.0),
                range_pct: range_left,
            });
        } else if let Some(last) = bands.last_mut() {
            last.io_pct += f64::max(io_left, 0.0);
        }
        Distribution::Zoned { bands }
    }
}

/// `60/1m:40/` (I/O % / length per band): a zoned_abs distribution. The I/O must
/// add up to 100; only the last band may leave its length out (the rest).
fn parse_zoned_bytes(
    arg: &str,
    size: &dyn Fn(&str) -> Option<u64>,
) -> Result<Distribution, DistributionError> {
    let parts: Vec<&str> = arg.split(':').collect();
    let mut bands = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        let (io, len) = part
            .split_once('/')
            .ok_or_else(|| DistributionError::BandShape(part.to_string()))?;
        let io_pct = io
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0);
        let bytes = match len.trim() {
            "" if k + 1 == parts.len() => Some(0),
            l => size(l).filter(|&b| b > 0),
        };
        match (io_pct, bytes) {
            (Some(io_pct), Some(bytes)) => bands.push(ZoneBytes { io_pct, bytes }),
            _ => return Err(DistributionError::BandNumbers(part.to_string())),
        }
    }
    let io: f64 = bands.iter().map(|b| b.io_pct).sum();
    if (io - 100.0).abs() > 0.01 {
        return Err(DistributionError::BandSums { io, range: 100.0 });
    }
    Ok(Distribution::ZonedBytes { bands })
}

/// `2,0,1` or `2,0,1:stride`: the block indices of a sequence distribution.
fn parse_sequence(arg: &str) -> Result<Distribution, DistributionError> {
    let (list, stride) = match arg.rsplit_once(':') {
        Some((list, tail)) if tail.trim().eq_ignore_ascii_case("stride") => (list, true),
        Some(_) => return Err(DistributionError::Sequence(arg.to_string())),
        None => (arg, false),
    };
    let blocks = list
        .split(',')
        .map(|b| b.trim().parse::<u64>())
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|_| DistributionError::Sequence(arg.to_string()))?;
    Ok(Distribution::Sequence { blocks, stride })
}

/// Why an offset distribution was refused; the message shows the accepted form.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DistributionError {
    #[error("zipf needs a positive exponent, e.g. zipf:1.2")]
    Zipf,
    #[error("pareto needs h between 0 and 1, e.g. pareto:0.9")]
    Pareto,
    #[error("band '{0}' is not IO%/RANGE%")]
    BandShape(String),
    #[error("band '{0}' needs non-negative numbers")]
    BandNumbers(String),
    #[error("bands must add up to 100% of I/O and 100% of range (got {io}% and {range}%)")]
    BandSums { io: f64, range: f64 },
    #[error(
        "sequence '{0}' is not a list of block indices, e.g. sequence:2,0,1 or \
         sequence:2,0,1:stride"
    )]
    Sequence(String),
    #[error(
        "expected uniform, zipf:THETA, pareto:H, zoned:IO%/RANGE%:…, zoned_abs:IO%/SIZE:…, \
         sequence:B,B,…[:stride] or vdbench_hotband"
    )]
    Unknown,
}

/// One band of a zoned_abs distribution: `io_pct` of the I/O goes to the next
/// `bytes` of the working set (0: the rest of it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ZoneBytes {
    pub io_pct: f64,
    pub bytes: u64,
}

impl Distribution {
    /// A zoned_abs distribution as the zoned one it is on a working set of
    /// `ws_bytes`, laid out as diskspd's `-rdabs` ranges are
    /// ([`Distribution::from_ranges`]): each band's length a share of the set, cut
    /// at its end (a band with none left dropped, its I/O going to the last band
    /// kept), what no band covers getting no I/O. Other distributions are returned
    /// as they are.
    pub fn in_fractions(&self, ws_bytes: u64) -> Distribution {
        let Distribution::ZonedBytes { bands } = self else {
            return self.clone();
        };
        // A band of 0 bytes is the rest: a length past any set's end, cut there.
        let ranges = bands.iter().map(|b| match b.bytes {
            0 => (b.io_pct, u64::MAX),
            n => (b.io_pct, n),
        });
        Distribution::laid_end_to_end(ranges, ws_bytes.max(1) as f64)
    }
}

/// One band of a zoned distribution: `io_pct` of the I/O goes to the next
/// `range_pct` of the working set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    pub io_pct: f64,
    pub range_pct: f64,
}

/// How the streams of a sequential workload share its working set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeqLayout {
    /// Each stream walks its own equal slice (fio's `offset_increment` style).
    #[default]
    Regions,
    /// Streams interleave over the whole set: stream i of n issues blocks i, i+n,
    /// i+2n…, so together they make one sequential sweep with n I/Os outstanding
    /// (vdbench threads on a sequential workload).
    Stride,
    /// Every stream walks the whole set, wrapping at its end; stream i starts
    /// `offset_increment` × i bytes in (diskspd's `-s` with `-T`), so without an
    /// increment the streams overlap, reading the same blocks one after another.
    Whole,
    /// The streams take the next offset from one position they share, in the order
    /// they issue (diskspd's interlocked `-si`): one sequential sweep, however
    /// unevenly the streams run.
    Shared,
}

impl SeqLayout {
    pub fn is_regions(&self) -> bool {
        *self == SeqLayout::Regions
    }

    pub fn name(self) -> &'static str {
        match self {
            SeqLayout::Regions => "regions",
            SeqLayout::Stride => "stride",
            SeqLayout::Whole => "whole",
            SeqLayout::Shared => "shared",
        }
    }

    pub fn parse(s: &str) -> Option<SeqLayout> {
        match s.to_ascii_lowercase().as_str() {
            "regions" | "region" => Some(SeqLayout::Regions),
            "stride" | "interleave" => Some(SeqLayout::Stride),
            "whole" => Some(SeqLayout::Whole),
            "shared" => Some(SeqLayout::Shared),
            _ => None,
        }
    }
}
