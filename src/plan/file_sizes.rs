//! Files of a tree that differ in length (vdbench's `fsd=…,size=(64k,25,1m,75)`):
//! a distribution of lengths, each with its share of the files, written in a `tree:`
//! URI as `size=65536:25,1048576:75&seed=N`. Each file's length is drawn on its own
//! from the seed and the file's index (vdbench draws each file's size from its
//! percentages in turn, with a fixed seed), so the same URI always makes the same
//! tree, whichever run opens it first, and the share of each length converges on its
//! percentage as the files grow in number. The set's address space keeps one stride
//! per file, the largest length: file `i` starts at `i × largest` and the byte
//! engines keep each I/O inside the file's own length.
//!
//! fio's `filesize=LOW-HIGH` is the other form, `LOW-HIGH/UNIT`: each file's length
//! drawn uniformly from `LOW` up to (not including) `HIGH`, rounded down to whole
//! `UNIT`s (fio's smallest block size), as fio's `get_rand_file_size` draws them —
//! from ioscope's own seeded draws, so the lengths are not fio's.

/// Parts per million in a whole (the percentages are kept to 0.0001 %).
const WHOLE_PPM: u32 = 1_000_000;

/// Lengths and the share of the files each one gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSizes {
    /// (length in bytes, share in parts per million), in the order given; empty for
    /// a [`Uniform`] draw.
    pub split: Vec<(u64, u32)>,
    /// Lengths drawn uniformly between two bounds instead of from `split`.
    pub uniform: Option<Uniform>,
    /// Seed of the draws (the same seed, the same tree).
    pub seed: u64,
}

/// Lengths from `low_bytes` up to (not including) `high_bytes`, rounded down to
/// whole `unit_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uniform {
    pub low_bytes: u64,
    pub high_bytes: u64,
    pub unit_bytes: u64,
}

impl FileSizes {
    /// Reads `LEN:PCT,LEN:PCT,…` (lengths with units, percentages adding up to 100)
    /// or `LOW-HIGH[/UNIT]` (a uniform draw).
    pub fn parse(value: &str, seed: u64) -> Result<FileSizes, String> {
        if !value.contains(':') && value.contains('-') {
            return Self::parse_uniform(value, seed);
        }
        let mut split = Vec::new();
        for part in value.split(',').filter(|p| !p.is_empty()) {
            let (len, pct) = part
                .split_once(':')
                .ok_or_else(|| format!("'{part}': expected LENGTH:PERCENT"))?;
            let bytes = super::units::parse_size(len).map_err(|e| format!("'{len}': {e}"))?;
            let ppm = pct
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
                .map(|p| (p * 10_000.0).round() as u32)
                .ok_or_else(|| format!("'{pct}': expected a percentage above 0, at most 100"))?;
            split.push((bytes, ppm));
        }
        let total: u32 = split.iter().map(|s| s.1).sum();
        if split.len() < 2 || total.abs_diff(WHOLE_PPM) > 100 {
            return Err(format!(
                "'{value}': expected two or more LENGTH:PERCENT whose percentages add up to \
                 100 (they add up to {})",
                f64::from(total) / 10_000.0
            ));
        }
        Ok(FileSizes {
            split,
            uniform: None,
            seed,
        })
    }

    /// Reads `LOW-HIGH[/UNIT]`: LOW below HIGH, the unit (default 1 byte) at most LOW.
    fn parse_uniform(value: &str, seed: u64) -> Result<FileSizes, String> {
        let (range, unit) = value.split_once('/').unwrap_or((value, "1"));
        let size = |t: &str| super::units::parse_size(t).map_err(|e| format!("'{t}': {e}"));
        let (low, high) = range
            .split_once('-')
            .ok_or_else(|| format!("'{value}': expected LOW-HIGH"))?;
        let u = Uniform {
            low_bytes: size(low)?,
            high_bytes: size(high)?,
            unit_bytes: size(unit)?,
        };
        if u.low_bytes >= u.high_bytes || u.unit_bytes > u.low_bytes {
            return Err(format!(
                "'{value}': expected LOW below HIGH and a unit no larger than LOW"
            ));
        }
        Ok(FileSizes {
            split: Vec::new(),
            uniform: Some(u),
            seed,
        })
    }

    /// The text [`FileSizes::parse`] reads back (lengths in bytes).
    pub fn text(&self) -> String {
        if let Some(u) = &self.uniform {
            return format!("{}-{}/{}", u.low_bytes, u.high_bytes, u.unit_bytes);
        }
        let parts: Vec<String> = self
            .split
            .iter()
            .map(|&(b, ppm)| format!("{b}:{}", f64::from(ppm) / 10_000.0))
            .collect();
        parts.join(",")
    }

    /// The largest length: the stride of each file in the set's address space.
    pub fn largest(&self) -> u64 {
        match &self.uniform {
            Some(u) => round_down(u.high_bytes - 1, u.unit_bytes),
            None => self.split.iter().map(|s| s.0).max().unwrap_or(0),
        }
    }

    /// The smallest length (no I/O may be longer).
    pub fn smallest(&self) -> u64 {
        match &self.uniform {
            Some(u) => round_down(u.low_bytes, u.unit_bytes),
            None => self.split.iter().map(|s| s.0).min().unwrap_or(0),
        }
    }

    /// The length of file `i`.
    pub fn of(&self, i: u64) -> u64 {
        let r = mix(self.seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        if let Some(u) = &self.uniform {
            let span = u.high_bytes - u.low_bytes;
            let off = ((u128::from(r) * u128::from(span)) >> 64) as u64;
            return round_down(u.low_bytes + off, u.unit_bytes);
        }
        let total: u32 = self.split.iter().map(|s| s.1).sum();
        let mut draw = (r % u64::from(total.max(1))) as u32;
        for &(bytes, ppm) in &self.split {
            if draw < ppm {
                return bytes;
            }
            draw -= ppm;
        }
        self.largest()
    }
}

fn round_down(bytes: u64, unit: u64) -> u64 {
    bytes - bytes % unit.max(1)
}

/// splitmix64's finaliser: nearby inputs give unrelated outputs (each file's draw
/// is a function of the seed and its index alone).
fn mix(z: u64) -> u64 {
    let mut x = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_back_a_split() {
        let s = FileSizes::parse("64k:25,128k:25,256k:25,1m:25", 7).unwrap();
        assert_eq!(s.split[0], (65536, 250_000));
        assert_eq!((s.largest(), s.smallest()), (1 << 20, 65536));
        assert_eq!(s.text(), "65536:25,131072:25,262144:25,1048576:25");
        assert_eq!(FileSizes::parse(&s.text(), 7), Ok(s));
        assert!(FileSizes::parse("4k:12.5,8k:87.5", 0).is_ok());
    }

    #[test]
    fn a_uniform_range_draws_whole_units_inside_it() {
        let s = FileSizes::parse("1m-10m/4k", 5).unwrap();
        assert_eq!(s.text(), "1048576-10485760/4096");
        assert_eq!(FileSizes::parse(&s.text(), 5), Ok(s.clone()));
        assert_eq!(
            (s.smallest(), s.largest()),
            (1 << 20, 10 * (1 << 20) - 4096)
        );
        let lens: Vec<u64> = (0..10_000).map(|i| s.of(i)).collect();
        assert!(lens
            .iter()
            .all(|&l| l % 4096 == 0 && (1 << 20..10 << 20).contains(&l)));
        // Uniform: the mean is within 2 % of the middle (5.5 MiB), and both ends are
        // reached within a tenth of the span.
        let mean = lens.iter().sum::<u64>() as f64 / lens.len() as f64;
        assert!((mean / (5.5 * 1048576.0) - 1.0).abs() < 0.02, "{mean}");
        assert!(lens.iter().any(|&l| l < 2 << 20) && lens.iter().any(|&l| l >= 9 << 20));
        for bad in ["10m-1m", "1m-1m", "4k-8k/8k", "1m-", "-1m"] {
            assert!(FileSizes::parse(bad, 0).is_err(), "{bad}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_split() {
        for bad in [
            "64k:50,128k:40",
            "64k",
            "64k:100",
            "x:50,4k:50",
            "4k:0,8k:100",
        ] {
            assert!(FileSizes::parse(bad, 0).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_length_gets_its_share_the_same_way_each_time() {
        let s = FileSizes::parse("4k:10,8k:30,16k:60", 137).unwrap();
        let n = 20_000;
        let mut got = [0u32; 3];
        for i in 0..n {
            let b = s.of(i);
            assert_eq!(b, s.of(i), "file {i} drawn twice differs");
            got[s.split.iter().position(|x| x.0 == b).unwrap()] += 1;
        }
        for (k, want) in [0.10, 0.30, 0.60].into_iter().enumerate() {
            let share = f64::from(got[k]) / n as f64;
            assert!((share - want).abs() < 0.015, "{k}: {share} for {want}");
        }
        let other = FileSizes {
            seed: 138,
            ..s.clone()
        };
        assert!(
            (0..64).any(|i| other.of(i) != s.of(i)),
            "the seed changes the tree"
        );
    }
}
