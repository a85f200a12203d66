//! Everything one diskspd command line sets, read switch by switch from diskspd's own
//! defaults (`-b64K -d10 -W5 -C0 -o2 -t1`, sequential reads, cached I/O, seed 0,
//! write buffers of the bytes 0..=255), then turned into one run.

use super::{affinity, cnt, ds_size, ds_size_rest, not_read, pct, secs, to_u32};
use crate::plan::compat::{base_run, CompatError, Loc, TargetTable, Translated, UnsupportedList};
use crate::plan::fill::FillPattern;
use crate::plan::model::{
    AccessPattern, Arrival, BlockSizes, DataSettings, Distribution, Pauses, Plan, Rate, RunSpec,
    SeqLayout, Workload,
};
use crate::plan::tuning::IoTuning;

/// How many threads run and on what: `-t` per target, or `-F` for all targets.
#[derive(Debug, Clone, Copy)]
enum Threads {
    PerTarget(u64),
    Total(u64),
}

/// `-t` and `-F` as given: diskspd keeps both and refuses `-F` with `-t` above 1
/// (its profile's `<ThreadCount>` beside `<ThreadsPerFile>`, which it writes as 1).
#[derive(Debug, Clone)]
struct ThreadSwitches {
    per_target: u64,
    /// Where a `-t` above 1 was given.
    per_target_at: Option<Loc>,
    total: Option<u64>,
}

/// `-r`/`-s`: random at an alignment, or sequential at a stride (interlocked: `-si`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Access {
    Random {
        align: Option<u64>,
    },
    Sequential {
        stride: Option<u64>,
        interlocked: bool,
    },
}

/// What diskspd's write buffers hold (`-Z`).
#[derive(Debug, Clone, PartialEq)]
enum Content {
    /// The bytes 0, 1, …, 255 repeated (no `-Z`).
    Counting,
    /// `-Z`: zeros.
    Zero,
    /// `-Zr`: fresh random bytes for every write.
    PerIoRandom,
    /// `-Z<size>`: a buffer of random bytes writes are taken from.
    RandomBuffer(u64),
}

/// `-z`: diskspd's seed is 0 without it and the clock's with a bare `-z`.
#[derive(Debug, Clone, Copy)]
enum Seed {
    Fixed(u64),
    /// Drawn from the clock when the line was read.
    Clock(u64),
}

/// `-rdpct` / `-rdabs`: (I/O %, target % or bytes) per range, in order.
#[derive(Debug, Clone)]
struct RangeDist {
    absolute: bool,
    ranges: Vec<(u64, u64)>,
    loc: Loc,
}

pub(super) struct DiskspdLine {
    block: u64,
    duration_ns: u64,
    warmup_ns: u64,
    cooldown_ns: u64,
    qd: u64,
    threads: ThreadSwitches,
    access: Option<Access>,
    /// `-rs<pct>` below 100: the percentage of random I/Os, the others continuing
    /// from the thread's previous I/O (diskspd's mixed mode).
    random_pct: Option<u8>,
    dist: Option<RangeDist>,
    write_pct: u8,
    direct: bool,
    /// Write-through (O_DSYNC): `-Sw`, `-Sh`, `-h`.
    write_through: bool,
    create_size: Option<u64>,
    max_size: Option<u64>,
    base: u64,
    /// `-T`: thread i starts i × this into the target.
    thread_stride: u64,
    /// `-p`: each outstanding I/O of a thread walks on its own from the same start.
    parallel: bool,
    burst: Option<u64>,
    think_ms: Option<u64>,
    /// Where the last `-i` or `-j` was (diskspd wants both or neither).
    burst_loc: Option<Loc>,
    /// `-g`: (amount, true for I/Os per second rather than bytes per millisecond).
    rate: Option<(u64, bool)>,
    cpus: Option<Vec<usize>>,
    /// `-n`: no affinity (diskspd otherwise pins threads round-robin to every CPU).
    no_affinity: bool,
    interval_ns: u64,
    seed: Seed,
    content: Content,
    warnings: Vec<String>,
    pub(super) targets: Vec<(String, Loc)>,
}

impl DiskspdLine {
    /// diskspd's defaults; `block` is the line's `-b`, which `b` sizes count in.
    pub(super) fn new(block: u64) -> Self {
        DiskspdLine {
            block,
            duration_ns: 10_000_000_000,
            warmup_ns: 5_000_000_000,
            cooldown_ns: 0,
            qd: 2,
            threads: ThreadSwitches {
                per_target: 1,
                per_target_at: None,
                total: None,
            },
            access: None,
            random_pct: None,
            dist: None,
            write_pct: 0,
            direct: false,
            write_through: false,
            create_size: None,
            max_size: None,
            base: 0,
            thread_stride: 0,
            parallel: false,
            burst: None,
            think_ms: None,
            burst_loc: None,
            rate: None,
            cpus: None,
            no_affinity: false,
            interval_ns: 1_000_000_000,
            seed: Seed::Fixed(0),
            content: Content::Counting,
            warnings: Vec::new(),
            targets: Vec::new(),
        }
    }

    /// One switch the table maps (`flag` and the text after it).
    pub(super) fn option(
        &mut self,
        a: &str,
        flag: &str,
        rest: &str,
        loc: &Loc,
        un: &mut UnsupportedList,
    ) -> Result<(), CompatError> {
        match flag {
            "b" | "d" | "W" | "C" | "o" | "t" | "F" | "w" | "D" => self.number(flag, rest, loc)?,
            "r" | "s" | "T" | "p" => self.access_option(flag, rest, loc)?,
            "B" | "c" | "f" => self.region_option(a, flag, rest, loc)?,
            "S" | "h" => self.cache(flag, rest, a, loc, un)?,
            "Z" => self.content(rest, a, loc, un)?,
            "i" | "j" | "g" => self.pacing(flag, rest, loc)?,
            "a" => self.cpus = affinity(rest, loc)?,
            "n" if rest.is_empty() => self.no_affinity = true,
            "z" => {
                self.seed = if rest.is_empty() {
                    Seed::Clock(
                        std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_millis() as u64 & u64::from(u32::MAX)),
                    )
                } else {
                    Seed::Fixed(rest.parse::<u32>().map(u64::from).map_err(|_| {
                        loc.error(format!("'{rest}' is not a seed (a 32-bit number)"))
                    })?)
                }
            }
            "R" => output_format(rest, loc)?,
            _ => not_read(a, loc, un),
        }
        Ok(())
    }

    /// The switches that take one number.
    fn number(&mut self, flag: &str, rest: &str, loc: &Loc) -> Result<(), CompatError> {
        let positive = |loc: &Loc| -> Result<u64, CompatError> {
            Some(cnt(rest, loc)?)
                .filter(|&n| n > 0)
                .ok_or_else(|| loc.error(format!("'{rest}' must be at least 1")))
        };
        match flag {
            "b" => {} // read before the other switches (`line_block`)
            "d" => self.duration_ns = secs(rest, false, loc)?,
            "W" => self.warmup_ns = secs(rest, true, loc)?,
            "C" => self.cooldown_ns = secs(rest, true, loc)?,
            "o" => self.qd = positive(loc)?,
            "t" => {
                self.threads.per_target = positive(loc)?;
                self.threads.per_target_at = (self.threads.per_target > 1).then(|| loc.clone());
            }
            "F" => self.threads.total = Some(positive(loc)?),
            "w" => self.write_pct = pct(rest, loc)?,
            _ => {
                // -D alone keeps the 1 s interval; -D<ms> sets it.
                if !rest.is_empty() {
                    self.interval_ns = positive(loc)?.saturating_mul(1_000_000);
                }
            }
        }
        Ok(())
    }

    /// `-r[align]`, `-rs<pct>`, `-rd<dist>`, `-s[i][stride]`, `-T<offset>`, `-p`.
    fn access_option(&mut self, flag: &str, rest: &str, loc: &Loc) -> Result<(), CompatError> {
        let conflict = |loc: &Loc| loc.error("sequential I/O (-s) conflicts with random I/O (-r)");
        match (flag, rest.chars().next()) {
            ("r", Some('s')) => {
                let p = pct(&rest[1..], loc)?;
                if p == 0 {
                    return Err(loc.error(
                        "-rs0: diskspd takes a random percentage from 1 to 100 (sequential \
                         I/O is -s)",
                    ));
                }
                if self.random_pct.is_some() {
                    return Err(loc.error("-rs: mixed random/sequential I/O given twice"));
                }
                if matches!(self.access, Some(Access::Sequential { .. })) {
                    return Err(conflict(loc));
                }
                if self.access.is_none() {
                    self.access = Some(Access::Random { align: None });
                }
                self.random_pct = (p < 100).then_some(p);
            }
            ("r", Some('d')) => self.dist = Some(range_dist(&rest[1..], self.block, loc)?),
            ("r", _) => {
                if matches!(self.access, Some(Access::Sequential { .. })) {
                    return Err(conflict(loc));
                }
                let align = (!rest.is_empty())
                    .then(|| ds_size(rest, self.block, loc))
                    .transpose()?;
                if align == Some(0) {
                    return Err(loc.error("-r0: an alignment must be above 0"));
                }
                self.access = Some(Access::Random { align });
            }
            ("s", _) => {
                if matches!(self.access, Some(Access::Random { .. })) {
                    return Err(conflict(loc));
                }
                let (interlocked, stride) = match rest.strip_prefix('i') {
                    Some(s) => (true, s),
                    None => (false, rest),
                };
                let stride = (!stride.is_empty())
                    .then(|| ds_size(stride, self.block, loc))
                    .transpose()?;
                self.access = Some(Access::Sequential {
                    stride,
                    interlocked,
                });
            }
            ("T", _) => {
                self.thread_stride = Some(ds_size(rest, self.block, loc)?)
                    .filter(|&t| t > 0)
                    .ok_or_else(|| loc.error("-T needs an offset above 0"))?
            }
            _ => self.parallel = true,
        }
        Ok(())
    }

    /// `-B<base>[:length]`, `-c<size>`, `-f<size>` or `-f<rst>` (open hints).
    fn region_option(
        &mut self,
        a: &str,
        flag: &str,
        rest: &str,
        loc: &Loc,
    ) -> Result<(), CompatError> {
        match flag {
            "B" => {
                let (base, tail) = ds_size_rest(rest, self.block, loc)?;
                self.base = base;
                if let Some(len) = tail.strip_prefix(':') {
                    let len = ds_size(len, self.block, loc)?;
                    self.max_size = Some(base.saturating_add(len));
                } else if !tail.is_empty() {
                    return Err(loc.error("-B takes <base>[:<length>]"));
                }
            }
            "c" => self.create_size = Some(ds_size(rest, self.block, loc)?),
            _ if rest.starts_with(|c: char| c.is_ascii_digit()) => {
                self.max_size = Some(ds_size(rest, self.block, loc)?)
            }
            _ => {
                if rest.is_empty() || !rest.chars().all(|c| matches!(c, 'r' | 's' | 't')) {
                    return Err(loc.error("-f takes a size or the hints r, s and t"));
                }
                self.warnings.push(format!(
                    "{a}: Windows open hints (random access, sequential scan, temporary \
                     file) that steer its cache manager; Linux has none, so they change \
                     nothing here"
                ));
            }
        }
        Ok(())
    }

    /// `-S[bhmruw]` and `-h`: `u` (and bare `-S`) is O_DIRECT, `w` write-through,
    /// `h` both, `b` the cache (the default).
    fn cache(
        &mut self,
        flag: &str,
        rest: &str,
        a: &str,
        loc: &Loc,
        un: &mut UnsupportedList,
    ) -> Result<(), CompatError> {
        let mode = match (flag, rest) {
            ("h", _) => "h",
            (_, "") => "u",
            _ => rest,
        };
        for c in mode.chars() {
            match c {
                'u' => self.direct = true,
                'w' => self.write_through = true,
                'h' => (self.direct, self.write_through) = (true, true),
                'b' => self.direct = false,
                'm' => un.push(format!("{a} — memory-mapped I/O"), loc),
                'r' => un.push(
                    format!("{a} — remote-only caching of a Windows remote file system"),
                    loc,
                ),
                _ => {
                    return Err(loc.error(format!(
                        "'{c}' is not a cache letter of -S (b, h, m, r, u, w)"
                    )))
                }
            }
        }
        Ok(())
    }

    /// `-Z`, `-Zr`, `-Z<size>`, `-Z<size>,<file>`.
    fn content(
        &mut self,
        rest: &str,
        a: &str,
        loc: &Loc,
        un: &mut UnsupportedList,
    ) -> Result<(), CompatError> {
        self.content = match rest {
            "" => Content::Zero,
            "r" => Content::PerIoRandom,
            _ => {
                let (size, file) = match rest.split_once(',') {
                    Some((s, f)) => (s, Some(f)),
                    None => (rest, None),
                };
                let size = ds_size(size, self.block, loc)?;
                if size == 0 {
                    return Err(loc.error("-Z<size> needs a size above 0"));
                }
                if file.is_some() {
                    un.push(format!("{a} — write content read from a file"), loc);
                }
                Content::RandomBuffer(size)
            }
        };
        Ok(())
    }

    /// `-i<count>`, `-j<ms>` (bursts) and `-g<bytes/ms>[i]` (throttle).
    fn pacing(&mut self, flag: &str, rest: &str, loc: &Loc) -> Result<(), CompatError> {
        let (n, iops) = match (flag, rest.strip_suffix('i')) {
            ("g", Some(n)) => (n, true),
            _ => (rest, false),
        };
        let n = Some(cnt(n, loc)?)
            .filter(|&n| n > 0)
            .ok_or_else(|| loc.error(format!("'{rest}' must be at least 1")))?;
        match flag {
            "i" => self.burst = Some(n),
            "j" => self.think_ms = Some(n),
            _ => self.rate = Some((n, iops)),
        }
        if flag != "g" {
            self.burst_loc = Some(loc.clone());
        }
        Ok(())
    }
}

/// `-R[p]text|xml`: the result's form. Either runs; `ioscope diskspd` writes
/// diskspd's XML to stdout for `-Rxml` and prints the translation without running
/// for `-Rp…` (see `app::foreign`).
fn output_format(rest: &str, loc: &Loc) -> Result<(), CompatError> {
    match rest.strip_prefix('p').unwrap_or(rest) {
        "" if rest == "p" => Ok(()),
        "text" | "xml" => Ok(()),
        _ => Err(loc.error(format!(
            "-R{rest}: diskspd's result formats are [p]text and [p]xml"
        ))),
    }
}

/// `-rdpct<io>/<target%>:…` or `-rdabs<io>/<size>:…`.
fn range_dist(text: &str, block: u64, loc: &Loc) -> Result<RangeDist, CompatError> {
    let (absolute, body) = if let Some(b) = text.strip_prefix("pct") {
        (false, b)
    } else if let Some(b) = text.strip_prefix("abs") {
        (true, b)
    } else {
        return Err(loc.error("-rd takes pct<io%>/<target%>:… or abs<io%>/<size>:…"));
    };
    let mut ranges = Vec::new();
    for part in body.split(':') {
        let (io, range) = part
            .split_once('/')
            .ok_or_else(|| loc.error(format!("'{part}' is not <io%>/<range>")))?;
        let io = u64::from(pct(io, loc)?);
        let range = if absolute {
            ds_size(range, block, loc)?
        } else {
            u64::from(pct(range, loc)?)
        };
        if range == 0 {
            return Err(loc.error(format!("'{part}': a range of 0")));
        }
        ranges.push((io, range));
    }
    let io: u64 = ranges.iter().map(|r| r.0).sum();
    let span: u64 = ranges.iter().map(|r| r.1).sum();
    if io > 100 || (!absolute && span > 100) {
        return Err(loc.error(format!(
            "-rd{text}: the I/O shares add up to {io}% and the ranges to {span}%, over 100"
        )));
    }
    if !absolute && span == 100 && io < 100 {
        return Err(loc.error(format!(
            "-rd{text}: the ranges cover the target with {}% of the I/O left to place",
            100 - io
        )));
    }
    Ok(RangeDist {
        absolute,
        ranges,
        loc: loc.clone(),
    })
}

mod translate;
