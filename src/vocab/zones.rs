//! Zones of a working set: fio's strided zones (`zonemode=strided`: I/O in one zone,
//! then a skip) and emulated zoned-block-device zones (`zonemode=zbd`: writes only at
//! write pointers). The settings and the checks that need nothing but them live here;
//! the checks against a whole workload (`misfit`) stay in `plan`, and the zone table
//! the run shares between streams is `run::zbd`. The trade-off: a type's methods are
//! split between two files, so that this one reads nothing above it.

use super::skip::{is_false, is_zero_f64, is_zero_u32};
use serde::{Deserialize, Serialize};

/// Strided zones (fio's `zonemode=strided`): each stream starts in the zone at the
/// working set's start, issues `io_bytes` of I/O there (sequential I/O walks the
/// zone and wraps inside it; random offsets are uniform in it), then the next zone
/// starts `range_bytes + skip_bytes` further on, wrapping to the working set's start
/// when it would begin past the end. Skipped bytes count towards a pass, as fio's
/// `io_skip_bytes` do, so a pass is one sweep over the working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zones {
    /// I/O done in a zone before moving on (fio's `zonesize`).
    pub io_bytes: u64,
    /// Length of a zone, where its I/O falls (fio's `zonerange`; default `io_bytes`).
    pub range_bytes: u64,
    /// Bytes left out between zones (fio's `zoneskip`).
    #[serde(default)]
    pub skip_bytes: u64,
}

/// A workload's emulated zones (fio's `zonemode=zbd`). The result echoes them in a
/// shape of its own (`result::workload::ZbdEcho`: limits and resets only when set).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Zbd {
    /// Length of a zone; zones start at multiples of it from the target's start.
    pub zone_bytes: u64,
    /// Bytes of a zone that can be written (fio's `zonecapacity`); at most
    /// `zone_bytes`.
    pub capacity_bytes: u64,
    /// Zones written at once by every workload on the target together (fio's
    /// `max_open_zones`); 0 = no limit.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub max_open: u32,
    /// Zones written at once by one stream (fio's `job_max_open_zones`, per clone);
    /// 0 = no limit. Needs `max_open`.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub stream_max_open: u32,
    /// Share of the working set written (0..=1) above which writes start resetting
    /// zones (fio's `zone_reset_threshold`).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub reset_threshold: f64,
    /// Above the threshold, every 1/this-th write resets its zone first (fio's
    /// `zone_reset_frequency`); 0 = never.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub reset_frequency: f64,
    /// Reads may go past a zone's write pointer (fio's `read_beyond_wp`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub read_beyond_wp: bool,
}

/// fio keeps at most this many write zones (its `ZBD_MAX_WRITE_ZONES`).
pub const MAX_OPEN_LIMIT: u32 = 4096;

impl Zbd {
    /// Zones of `zone_bytes` whose capacity is the whole zone, no limits.
    pub fn of_size(zone_bytes: u64) -> Zbd {
        Zbd {
            zone_bytes,
            capacity_bytes: zone_bytes,
            max_open: 0,
            stream_max_open: 0,
            reset_threshold: 0.0,
            reset_frequency: 0.0,
            read_beyond_wp: false,
        }
    }

    /// Why these settings are wrong on their own, if they are.
    pub fn invalid(&self) -> Option<String> {
        if self.zone_bytes < 512 {
            return Some(format!(
                "the zone size must be at least 512 bytes, found {}",
                self.zone_bytes
            ));
        }
        if self.capacity_bytes == 0 || self.capacity_bytes > self.zone_bytes {
            return Some(format!(
                "the zone capacity ({} bytes) must be above 0 and at most the zone size ({} bytes)",
                self.capacity_bytes, self.zone_bytes
            ));
        }
        if self.max_open > MAX_OPEN_LIMIT {
            return Some(format!(
                "at most {MAX_OPEN_LIMIT} open zones, found {}",
                self.max_open
            ));
        }
        if self.stream_max_open > 0 && self.max_open == 0 {
            return Some(
                "a per-stream open-zone limit needs an open-zone limit for the target".into(),
            );
        }
        for (what, v) in [
            ("reset threshold", self.reset_threshold),
            ("reset frequency", self.reset_frequency),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Some(format!(
                    "the zone {what} must be between 0 and 1, found {v}"
                ));
            }
        }
        None
    }
}
