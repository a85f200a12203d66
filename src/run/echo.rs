//! The plan-to-result conversion of a workload: what `runs[].workload` publishes.
//! It lives in the run layer because it is the one place that knows both the plan's
//! internal types and the result's wire types (the result model depends on nothing).
//! Every match here is exhaustive, so a new plan setting or variant stops the build
//! until someone decides how (or whether) the result shows it.

use crate::plan::model as plan;
use crate::plan::tuning;
use crate::result::io as io_wire;
use crate::result::workload as wire;

/// The result's echo of a run's io settings (`runs[].io`).
pub fn io_echo(io: &tuning::IoTuning) -> io_wire::IoEcho {
    let tuning::IoTuning {
        uring,
        write_through,
        sync_every,
        sync_kind,
    } = io;
    let tuning::UringOptions {
        fixed_bufs,
        register_files,
        sqpoll,
        sqpoll_cpu,
        hipri,
        batch_submit,
        batch_complete_min,
        batch_complete_max,
    } = uring;
    io_wire::IoEcho {
        uring: (!uring.is_default()).then_some(io_wire::UringEcho {
            fixed_bufs: *fixed_bufs,
            register_files: *register_files,
            sqpoll: *sqpoll,
            sqpoll_cpu: *sqpoll_cpu,
            hipri: *hipri,
            batch_submit: *batch_submit,
            batch_complete_min: *batch_complete_min,
            batch_complete_max: *batch_complete_max,
        }),
        write_through: *write_through,
        sync_every: *sync_every,
        sync_kind: match sync_kind {
            tuning::SyncKind::Fsync => None,
            tuning::SyncKind::Fdatasync => Some(io_wire::SyncKind::Fdatasync),
        },
    }
}

/// The result's echo of SPRandom's settings.
fn sprandom_echo(s: plan::Sprandom) -> wire::Sprandom {
    let plan::Sprandom {
        op,
        regions,
        cache_bytes,
    } = s;
    wire::Sprandom {
        op,
        regions,
        cache_bytes,
    }
}

/// Emulated zones as the result shows them (limits and resets only when set).
fn zbd_echo(z: &crate::plan::zbd::Zbd) -> wire::Zbd {
    wire::Zbd {
        zone_bytes: z.zone_bytes,
        capacity_bytes: z.capacity_bytes,
        max_open: (z.max_open > 0).then_some(z.max_open),
        stream_max_open: (z.stream_max_open > 0).then_some(z.stream_max_open),
        reset_threshold: (z.reset_frequency > 0.0).then_some(z.reset_threshold),
        reset_frequency: (z.reset_frequency > 0.0).then_some(z.reset_frequency),
        read_beyond_wp: z.read_beyond_wp,
    }
}

/// The result's echo of a workload's pauses (every field, so a new one is not missed).
fn pauses_echo(p: plan::Pauses) -> wire::Pauses {
    let plan::Pauses {
        start_delay_ns,
        think_ns,
        think_every_ios,
        think_io_ns,
        stop_ns,
        stop_after_ios,
        pass_bytes,
    } = p;
    wire::Pauses {
        start_delay_ns,
        think_ns,
        think_every_ios,
        think_io_ns,
        stop_ns,
        stop_after_ios,
        pass_bytes,
    }
}

/// The result's echo of a plan workload.
pub fn workload_echo(w: &plan::Workload) -> wire::WorkloadEcho {
    let plan::Workload {
        name,
        target,
        read_pct,
        trim,
        pattern,
        bs,
        qd,
        streams,
        rate,
        offset_bytes,
        size_bytes,
        dist,
        arrival,
        share_pct,
        seq_layout,
        align_bytes,
        seq_gap_bytes,
        offset_increment_bytes,
        zones,
        zbd,
        flow,
        exit_all,
        pauses,
        priority,
        atomic_writes,
        fill_fs,
        sprandom,
        file_service,
        // Effective values need the run and the engine that ran it: `own_echo`.
        overrides: _,
        settings,
    } = w;
    wire::WorkloadEcho {
        name: name.clone(),
        target: target.clone(),
        read_pct: *read_pct,
        trim: match trim {
            plan::TrimMode::None => wire::TrimMode::None,
            plan::TrimMode::Only => wire::TrimMode::Only,
            plan::TrimMode::ThenWrite => wire::TrimMode::ThenWrite,
        },
        pattern: match pattern {
            plan::AccessPattern::Sequential => wire::AccessPattern::Sequential,
            plan::AccessPattern::Random => wire::AccessPattern::Random,
        },
        bs: wire::BlockSizes {
            split: bs.split.clone(),
            write_split: bs.write_split.clone(),
        },
        qd: *qd,
        streams: *streams,
        rate: match *rate {
            plan::Rate::Max => wire::Rate::Max,
            plan::Rate::Iops(n) => wire::Rate::Iops(n),
        },
        offset_bytes: *offset_bytes,
        size_bytes: *size_bytes,
        dist: distribution(dist),
        arrival: match arrival {
            plan::Arrival::Uniform => wire::Arrival::Uniform,
            plan::Arrival::Exponential => wire::Arrival::Exponential,
        },
        share_pct: *share_pct,
        seq_layout: match seq_layout {
            plan::SeqLayout::Regions => wire::SeqLayout::Regions,
            plan::SeqLayout::Stride => wire::SeqLayout::Stride,
        },
        align_bytes: *align_bytes,
        seq_gap_bytes: *seq_gap_bytes,
        offset_increment_bytes: *offset_increment_bytes,
        zones: zones.map(|z| wire::Zones {
            io_bytes: z.io_bytes,
            range_bytes: z.range_bytes,
            skip_bytes: z.skip_bytes,
        }),
        zbd: zbd.as_ref().map(zbd_echo),
        flow: flow.map(|f| {
            let plan::Flow {
                id,
                weight,
                sleep_ns,
            } = f;
            wire::Flow {
                id,
                weight,
                sleep_ns,
            }
        }),
        exit_all: *exit_all,
        pauses: pauses_echo(*pauses),
        priority: (!priority.is_default()).then(|| priorities(priority)),
        atomic_writes: *atomic_writes,
        fill_fs: *fill_fs,
        sprandom: sprandom.map(sprandom_echo),
        file_service: (!file_service.is_default()).then(|| file_service.text()),
        declared: settings.echo(),
        engine: None,
        warmup_ns: None,
        cpus: None,
        workers: None,
        data: None,
        on_error: None,
    }
}

/// Fills each workload's echo in `result.workloads` with what it ran with: the
/// engine of its workers, its warm-up, the CPUs its workers were pinned to, the
/// workers themselves and its data settings (each workload may have its own).
pub(super) fn own_settings(
    result: &mut crate::result::RunResult,
    run: &plan::RunSpec,
    groups: &[(super::groups::Group, super::engine_choice::EngineChoice)],
    placed: &super::launch::Placed,
    opts: &super::RunOptions,
) {
    let group_of = super::groups::group_of(
        &groups.iter().map(|(g, _)| g.clone()).collect::<Vec<_>>(),
        run.workloads.len(),
    );
    for (i, (w, r)) in run.workloads.iter().zip(&mut result.workloads).enumerate() {
        let Some(echo) = r.settings.as_mut() else {
            continue;
        };
        let workers = placed.workers.get(i).cloned().unwrap_or_default();
        let mut cpus: Vec<usize> = workers
            .iter()
            .filter_map(|&wi| placed.cpus.get(wi).copied().flatten())
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        let d = opts.data.for_workload(w);
        echo.engine = groups
            .get(group_of[i])
            .map(|(_, c)| c.kind.name().to_string());
        echo.warmup_ns = Some(run.warmup_of(w));
        echo.cpus = (!cpus.is_empty()).then_some(cpus);
        echo.workers = Some(workers);
        echo.data = Some(wire::DataEcho {
            verify: d.verify,
            verify_after: d.verify_after,
            dedup_ratio: d.spec.dedup_ratio,
            compress_ratio: d.spec.compress_ratio,
            pattern: d.spec.fill.map(|f| {
                let hex: String = f.as_slice().iter().map(|b| format!("{b:02x}")).collect();
                format!("0x{hex}")
            }),
            verify_backlog: w.overrides.data.verify_backlog.map(|b| b.every_writes),
            verify_backlog_batch: w.overrides.data.verify_backlog.map(|b| b.batch_reads),
        });
        echo.on_error = w.overrides.on_error.as_ref().map(on_error_echo);
    }
}

/// A workload's own error policy as the result records it.
fn on_error_echo(p: &crate::plan::on_error::OnError) -> wire::OnErrorEcho {
    let names = |l: &Option<Vec<crate::plan::on_error::Errno>>| {
        l.as_ref()
            .map(|l| l.iter().map(|e| e.to_string()).collect())
    };
    wire::OnErrorEcho {
        continue_on: p.continue_on.iter().map(|k| k.name().to_string()).collect(),
        read_errnos: names(&p.read_errnos),
        write_errnos: names(&p.write_errnos),
    }
}

fn priorities(p: &crate::plan::priority::Priorities) -> wire::Priorities {
    use crate::plan::priority as prio;
    let one = |x: &prio::IoPriority| {
        let prio::IoPriority { class, level, hint } = *x;
        // The kernel's value (class << 13 | hint << 3 | level) follows from these.
        wire::IoPriority {
            class: match class {
                prio::PrioClass::Rt => wire::PrioClass::Rt,
                prio::PrioClass::Be => wire::PrioClass::Be,
                prio::PrioClass::Idle => wire::PrioClass::Idle,
            },
            level,
            hint,
        }
    };
    let prio::Priorities { job, per_io } = p;
    wire::Priorities {
        job: job.as_ref().map(one),
        per_io: per_io
            .iter()
            .map(|s| {
                let prio::PrioShare {
                    op,
                    bs_bytes,
                    pct,
                    prio,
                } = s;
                wire::PrioShare {
                    op: op.map(|o| match o {
                        plan::Op::Read => wire::PrioOp::Read,
                        plan::Op::Write => wire::PrioOp::Write,
                        plan::Op::Trim => wire::PrioOp::Trim,
                    }),
                    bs_bytes: *bs_bytes,
                    pct: *pct,
                    prio: one(prio),
                }
            })
            .collect(),
    }
}

fn distribution(d: &plan::Distribution) -> wire::Distribution {
    match d {
        plan::Distribution::Uniform => wire::Distribution::Uniform,
        plan::Distribution::Zipf { theta } => wire::Distribution::Zipf { theta: *theta },
        plan::Distribution::Pareto { h } => wire::Distribution::Pareto { h: *h },
        plan::Distribution::Zoned { bands } => wire::Distribution::Zoned {
            bands: bands
                .iter()
                .map(|z| wire::Zone {
                    io_pct: z.io_pct,
                    range_pct: z.range_pct,
                })
                .collect(),
        },
        plan::Distribution::Sequence { blocks, stride } => wire::Distribution::Sequence {
            blocks: blocks.clone(),
            stride: *stride,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Workloads covering every variant the echo converts.
    fn samples() -> Vec<plan::Workload> {
        let base = plan::Workload::default();
        vec![
            base.clone(),
            plan::Workload {
                name: "mix".into(),
                target: "data".into(),
                read_pct: 70,
                trim: plan::TrimMode::None,
                offset_increment_bytes: 1 << 20,
                zones: Some(plan::Zones {
                    io_bytes: 1 << 20,
                    range_bytes: 2 << 20,
                    skip_bytes: 4 << 20,
                }),
                pattern: plan::AccessPattern::Sequential,
                bs: plan::BlockSizes {
                    split: vec![(4096, 60), (65536, 40)],
                    write_split: Some(vec![(1 << 20, 100)]),
                },
                qd: 16,
                streams: 4,
                rate: plan::Rate::Iops(2500.0),
                offset_bytes: 1 << 20,
                size_bytes: Some(1 << 30),
                dist: plan::Distribution::Zoned {
                    bands: vec![
                        plan::Zone {
                            io_pct: 90.0,
                            range_pct: 10.0,
                        },
                        plan::Zone {
                            io_pct: 10.0,
                            range_pct: 90.0,
                        },
                    ],
                },
                arrival: plan::Arrival::Uniform,
                share_pct: Some(25.0),
                seq_layout: plan::SeqLayout::Stride,
                align_bytes: Some(65536),
                seq_gap_bytes: -8192,
                flow: Some(plan::Flow {
                    id: 2,
                    weight: 8,
                    sleep_ns: 1_000_000,
                }),
                exit_all: true,
                pauses: plan::Pauses {
                    start_delay_ns: 2_000_000_000,
                    think_ns: 500_000,
                    think_every_ios: 4,
                    think_io_ns: 3_000_000_000,
                    stop_ns: 9_000_000_000,
                    stop_after_ios: 0,
                    pass_bytes: 0,
                },
                priority: crate::plan::priority::Priorities {
                    job: Some(crate::plan::priority::IoPriority::parse("be/7").unwrap()),
                    per_io: vec![
                        crate::plan::priority::PrioShare::parse("read:64k:25%rt/1/2").unwrap(),
                        crate::plan::priority::PrioShare::parse("10%idle").unwrap(),
                    ],
                },
                atomic_writes: true,
                fill_fs: false,
                sprandom: Some(plan::Sprandom::default()),
                zbd: None,
                file_service: Default::default(),
                overrides: Default::default(),
                settings: Default::default(),
            },
            plan::Workload {
                zbd: Some(crate::plan::zbd::Zbd {
                    capacity_bytes: 1 << 19,
                    max_open: 4,
                    stream_max_open: 2,
                    reset_threshold: 0.7,
                    reset_frequency: 0.125,
                    read_beyond_wp: true,
                    ..crate::plan::zbd::Zbd::of_size(1 << 20)
                }),
                ..base.clone()
            },
            plan::Workload {
                dist: plan::Distribution::Zipf { theta: 1.2 },
                arrival: plan::Arrival::Exponential,
                ..base.clone()
            },
            plan::Workload {
                dist: plan::Distribution::Pareto { h: 0.9 },
                ..base
            },
        ]
    }

    // The published shape is the one the plan itself serialises to (the result used to
    // hold exactly that JSON), so typing the echo changed no result file.
    #[test]
    fn echo_serialises_as_the_plan_workload_did() {
        for w in samples() {
            let plan_json = serde_json::to_value(&w).unwrap();
            let mut echo_json = serde_json::to_value(workload_echo(&w)).unwrap();
            // Declared settings are echoed given or not; a plan writes those given.
            for d in crate::plan::settings::of_scope(crate::plan::settings::Scope::Workload) {
                let echoed = echo_json.as_object_mut().unwrap().remove(d.echo);
                assert_eq!(echoed, Some(d.default.to_json()), "{}: {}", w.name, d.key);
            }
            assert_eq!(echo_json, plan_json, "{}", w.name);
        }
    }

    // `runs[].io` used to be the plan's `io` table serialised as is; the typed echo
    // publishes the same JSON.
    #[test]
    fn io_echo_serialises_as_the_plan_io_table_did() {
        let samples = [
            tuning::IoTuning {
                write_through: true,
                ..Default::default()
            },
            tuning::IoTuning {
                uring: tuning::UringOptions {
                    fixed_bufs: true,
                    register_files: Some(false),
                    sqpoll: true,
                    sqpoll_cpu: Some(3),
                    hipri: true,
                    batch_submit: 8,
                    batch_complete_min: 2,
                    batch_complete_max: 16,
                },
                write_through: false,
                sync_every: 4,
                sync_kind: tuning::SyncKind::Fdatasync,
            },
            tuning::IoTuning {
                sync_every: 1,
                ..Default::default()
            },
        ];
        for io in samples {
            let plan_json = serde_json::to_value(&io).unwrap();
            let echo = io_echo(&io);
            assert_eq!(serde_json::to_value(&echo).unwrap(), plan_json, "{io:?}");
            let back: io_wire::IoEcho = serde_json::from_value(plan_json).unwrap();
            assert_eq!(back, echo, "an older result's io reads back");
        }
    }

    #[test]
    fn echo_keeps_every_setting() {
        let w = &samples()[1];
        let e = workload_echo(w);
        assert_eq!((e.name.as_str(), e.target.as_str()), ("mix", "data"));
        assert_eq!((e.read_pct, e.qd, e.streams), (70, 16, 4));
        assert_eq!(e.pattern, wire::AccessPattern::Sequential);
        assert_eq!(e.bs.split, vec![(4096, 60), (65536, 40)]);
        assert_eq!(e.bs.write_split, Some(vec![(1 << 20, 100)]));
        assert_eq!(e.rate, wire::Rate::Iops(2500.0));
        assert_eq!((e.offset_bytes, e.size_bytes), (1 << 20, Some(1 << 30)));
        assert_eq!(e.arrival, wire::Arrival::Uniform);
        assert_eq!(e.share_pct, Some(25.0));
        assert_eq!(e.seq_layout, wire::SeqLayout::Stride);
        assert_eq!(e.align_bytes, Some(65536));
        assert_eq!(e.seq_gap_bytes, -8192);
        assert!(e.exit_all);
        assert_eq!(
            (
                e.pauses.start_delay_ns,
                e.pauses.think_ns,
                e.pauses.think_every_ios
            ),
            (2_000_000_000, 500_000, 4)
        );
        assert_eq!(e.rw(), "rw");
        let wire::Distribution::Zoned { bands } = &e.dist else {
            panic!("zoned expected, got {:?}", e.dist);
        };
        assert_eq!(bands.len(), 2);
        assert_eq!((bands[0].io_pct, bands[0].range_pct), (90.0, 10.0));
    }
}
