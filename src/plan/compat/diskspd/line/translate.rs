//! A read diskspd line → one run: one workload per target, one worker per diskspd
//! thread, and a one-line warning for each thing diskspd does that the plan does
//! another way.

use super::*;

/// The 256 bytes diskspd's write buffers hold by default: 0, 1, …, 255.
fn counting_bytes() -> Vec<u8> {
    (0..=255u8).collect()
}

impl DiskspdLine {
    /// The plan: one workload per target, one run.
    pub(in crate::plan::compat::diskspd) fn into_translated(
        mut self,
        mut un: UnsupportedList,
    ) -> Result<Translated, CompatError> {
        let Some(first) = self.targets.first().map(|t| t.1.clone()) else {
            return Err(CompatError {
                source_name: "command line".into(),
                line: 0,
                column_or_arg: None,
                msg: "diskspd needs at least one target".into(),
            });
        };
        if let (Some(loc), true) = (
            &self.burst_loc,
            self.burst.is_some() != self.think_ms.is_some(),
        ) {
            // diskspd's Common.cpp refuses one without the other.
            return Err(
                loc.error("need to specify -j<think time> with -i<burst size>, as diskspd does")
            );
        }
        let (streams, workers) = match self.threads()? {
            Threads::PerTarget(t) => (t, t * self.targets.len() as u64),
            Threads::Total(f) => (f, f),
        };
        self.check_access(&first)?;
        let mut proto = self.workload_shape(streams, &first, &mut un)?;
        proto.pauses = self.pauses(streams);
        self.say_substitutions();
        let mut table = TargetTable::default();
        let mut workloads = Vec::new();
        for (uri, loc) in &self.targets {
            let name = table.intern(uri, self.create_size, Some(self.direct), &mut un, loc);
            workloads.push(Workload {
                name: format!("w{}", workloads.len()),
                target: name,
                ..proto.clone()
            });
        }
        let run = RunSpec {
            name: "diskspd".into(),
            workloads,
            duration_ns: Some(self.duration_ns),
            warmup_ns: self.warmup_ns,
            interval_ns: self.interval_ns,
            cpus: self.cpus.clone().filter(|_| !self.no_affinity),
            workers: Some(usize::try_from(workers).map_err(|_| first.error("too many threads"))?),
            seed: self.seed_value(),
            io: IoTuning {
                write_through: self.write_through,
                ..Default::default()
            },
            ..base_run()
        };
        let data = self.data();
        Ok(Translated {
            plan: Plan {
                targets: table.targets,
                runs: vec![run],
                warnings: self.warnings,
                data,
            },
            unsupported: un.0,
        })
    }

    /// `-F` (threads shared by all targets) or `-t` (threads per target); both at
    /// once diskspd refuses unless `-t` is 1, as a profile it wrote has it.
    fn threads(&self) -> Result<Threads, CompatError> {
        let t = &self.threads;
        match (t.total, &t.per_target_at) {
            (Some(f), Some(at)) => Err(at.error(format!(
                "-t{} with -F{f}: diskspd runs either threads per target (-t) or threads \
                 shared by all targets (-F), and refuses both",
                t.per_target
            ))),
            (Some(f), None) => Ok(Threads::Total(f)),
            (None, _) => Ok(Threads::PerTarget(t.per_target)),
        }
    }

    /// diskspd's own refusals of switches that contradict each other.
    fn check_access(&self, loc: &Loc) -> Result<(), CompatError> {
        let seq = matches!(self.access, None | Some(Access::Sequential { .. }));
        let interlocked = matches!(
            self.access,
            Some(Access::Sequential {
                interlocked: true,
                ..
            })
        );
        if self.thread_stride > 0 && !seq {
            return Err(loc.error("-T (thread stride) applies to sequential I/O, not -r"));
        }
        if interlocked && (self.thread_stride > 0 || self.parallel) {
            return Err(loc.error("-si (one shared offset) conflicts with -T and -p"));
        }
        if self.dist.is_some() && seq {
            return Err(loc.error("-rd (a random distribution) needs random I/O (-r)"));
        }
        Ok(())
    }

    /// Everything a target's workload shares with the others but its target.
    fn workload_shape(
        &self,
        streams: u64,
        loc: &Loc,
        un: &mut UnsupportedList,
    ) -> Result<Workload, CompatError> {
        let mut w = Workload {
            read_pct: 100 - self.write_pct,
            bs: BlockSizes::fixed(self.block),
            qd: to_u32(self.qd, loc)?,
            streams: to_u32(streams, loc)?,
            offset_bytes: self.base,
            size_bytes: self.max_size.map(|m| m.saturating_sub(self.base)),
            ..Default::default()
        };
        match self.access.unwrap_or(Access::Sequential {
            stride: None,
            interlocked: false,
        }) {
            Access::Random { align } => {
                w.pattern = AccessPattern::Random;
                w.align_bytes = align.filter(|&a| a != self.block);
                if let Some(d) = &self.dist {
                    w.dist = self.distribution(d, un);
                }
                if let Some(p) = self.random_pct {
                    use crate::plan::settings::{declared::RANDOM_PCT, Value};
                    w.settings.set(&RANDOM_PCT, Value::Ratio(f64::from(p)));
                }
            }
            Access::Sequential {
                stride,
                interlocked,
            } => {
                w.pattern = AccessPattern::Sequential;
                let step = stride.unwrap_or(self.block);
                w.seq_gap_bytes = step as i64 - self.block as i64;
                w.offset_increment_bytes = self.thread_stride;
                if self.parallel {
                    // Each outstanding I/O walks on its own from its thread's start.
                    w.streams = to_u32(streams * self.qd, loc)?;
                    w.qd = 1;
                    if self.thread_stride > 0 {
                        un.push("-p with -T — each thread's I/Os from its own start", loc);
                    }
                }
                // diskspd's threads on a target overlap (-s, from -T apart) or share
                // one offset (-si); one alone walks the target as any stream does.
                w.seq_layout = match (w.streams > 1, interlocked) {
                    (false, _) => SeqLayout::Regions,
                    (true, true) => SeqLayout::Shared,
                    (true, false) => SeqLayout::Whole,
                };
            }
        }
        w.rate = match self.rate {
            None => Rate::Max,
            Some((n, iops)) => {
                let per_thread = if iops {
                    n as f64
                } else {
                    n as f64 * 1000.0 / self.block as f64
                };
                Rate::Iops(per_thread * streams as f64)
            }
        };
        w.arrival = Arrival::Uniform;
        Ok(w)
    }

    /// `-rdpct`/`-rdabs` as hot bands: the I/O left over goes to the rest of the
    /// target, as diskspd applies it; absolute ranges need the working set's size.
    fn distribution(&self, d: &RangeDist, un: &mut UnsupportedList) -> Distribution {
        let span = if d.absolute {
            match self.max_size.or(self.create_size) {
                Some(end) if end > self.base => (end - self.base) as f64,
                _ => {
                    un.push(
                        "-rdabs — ranges in bytes need the target's size here: give -c or -f",
                        &d.loc,
                    );
                    return Distribution::Uniform;
                }
            }
        } else {
            100.0
        };
        Distribution::from_ranges(&d.ranges, span)
    }

    /// Bursts (`-i`, `-j`): after `-i` I/Os (shared by the threads on a target) a
    /// thread pauses `-j` ms. diskspd ignores them under a throttle (`-g`).
    fn pauses(&self, streams: u64) -> Pauses {
        match (self.think_ms, self.rate) {
            (Some(ms), None) => Pauses {
                think_ns: ms.saturating_mul(1_000_000),
                think_every_ios: (self.burst.unwrap_or(0) / streams.max(1))
                    .clamp(1, u64::from(u32::MAX)) as u32,
                ..Default::default()
            },
            _ => Pauses::default(),
        }
    }

    /// One line per thing diskspd does that this plan does another way.
    fn say_substitutions(&mut self) {
        let seed = self.seed_value();
        let mut lines = Vec::new();
        let mut say = |s: String| lines.push(s);
        if self.think_ms.is_some() && self.rate.is_some() {
            say("-i/-j: diskspd ignores bursts under a throttle (-g), and so does this run".into());
        } else if self.think_ms.is_some() && self.qd > 1 {
            say(format!(
                "-j: the pause starts once a burst's I/Os have all completed; diskspd \
                 starts it at the burst's last completion with up to {} others in flight",
                self.qd - 1
            ));
        }
        if let Some((n, iops)) = self.rate {
            let unit = if iops {
                "I/Os per second"
            } else {
                "bytes per ms"
            };
            say(format!(
                "-g{n}{}: each thread paced at {n} {unit} with evenly spaced issue times; \
                 latency counts from each I/O's intended time (service time is what \
                 diskspd's latency measures)",
                if iops { "i" } else { "" }
            ));
        }
        if let Some(p) = self.random_pct {
            say_mixed(p, self.write_pct, self.access, self.block, &mut say);
        }
        if self.cooldown_ns > 0 {
            say(format!(
                "-C{}: the cool-down only keeps load on the target after measuring ends \
                 (for other instances still measuring); this run stops when its \
                 measured time ends",
                self.cooldown_ns / 1_000_000_000
            ));
        }
        if self.cpus.is_none() && !self.no_affinity {
            say(
                "diskspd pins its threads round-robin to every CPU by default; ioscope \
                 leaves its workers to the scheduler (give -a0,1,… to pin them)"
                    .into(),
            );
        }
        if let Content::RandomBuffer(size) = self.content {
            say(format!(
                "-Z{size}: writes carry fresh random bytes; diskspd copies them from one \
                 {size}-byte random buffer, so its content repeats beyond that size"
            ));
        }
        if matches!(self.seed, Seed::Clock(_)) {
            say(format!(
                "-z: seed {seed} taken from the clock, as diskspd takes one; the run is \
                 not repeatable"
            ));
        }
        self.warnings.extend(lines);
    }

    fn seed_value(&self) -> u64 {
        match self.seed {
            Seed::Fixed(n) | Seed::Clock(n) => n,
        }
    }

    /// What writes carry: diskspd's counting bytes, zeros, or fresh random bytes.
    fn data(&self) -> DataSettings {
        let pattern = match self.content {
            _ if self.write_pct == 0 => None,
            Content::Counting => FillPattern::new(counting_bytes()).ok(),
            Content::Zero => FillPattern::new(vec![0]).ok(),
            Content::PerIoRandom | Content::RandomBuffer(_) => None,
        };
        DataSettings {
            pattern,
            ..Default::default()
        }
    }
}

/// `-rs<pct>`: what ioscope's `random_pct` does otherwise than diskspd's mixed mode
/// (`ThreadTargetState::NextRelativeMixedOffset`, `NextIOType`), one line each.
fn say_mixed(
    p: u8,
    write_pct: u8,
    access: Option<Access>,
    block: u64,
    say: &mut impl FnMut(String),
) {
    if (1..100).contains(&write_pct) {
        say(format!(
            "-rs{p}: each I/O is a read or a write by -w{write_pct}; diskspd draws that only \
             for a random I/O and keeps it for the sequential ones after it"
        ));
    }
    if let Some(Access::Random { align: Some(a) }) = access {
        if a != block {
            say(format!(
                "-rs{p}: a sequential I/O starts where the previous one ended; diskspd's \
                 starts {a} bytes (the -r alignment) after the previous one's start"
            ));
        }
    }
}
