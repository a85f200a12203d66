//! Tests of the plan-to-result conversion: the echo writes the JSON the plan itself
//! serialises to, and keeps every setting.

use super::*;
use crate::plan::model as plan;
use crate::plan::tuning;
use crate::result::io as io_wire;
use crate::result::workload as wire;

/// Declared settings with `exit_all` given.
fn exiting() -> crate::plan::settings::WorkloadSettings {
    let mut s = crate::plan::settings::WorkloadSettings::default();
    let exit_all = &crate::plan::settings::declared::EXIT_ALL;
    s.set(exit_all, crate::plan::settings::Value::Flag(true));
    s
}

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
            sprandom: Some(plan::Sprandom::default()),
            zbd: None,
            file_service: Default::default(),
            overrides: Default::default(),
            settings: exiting(),
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
        let mut plan_json = serde_json::to_value(&w).unwrap();
        let mut echo_json = serde_json::to_value(workload_echo(&w)).unwrap();
        // Declared settings are echoed given or not; a plan writes those given.
        for d in crate::plan::settings::of_scope(crate::plan::settings::Scope::Workload) {
            let echoed = echo_json.as_object_mut().unwrap().remove(d.echo);
            assert_eq!(
                echoed,
                Some(w.settings.get(d).to_json()),
                "{}: {}",
                w.name,
                d.key
            );
            plan_json.as_object_mut().unwrap().remove(d.echo);
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
    assert_eq!(e.declared["exit_all"], serde_json::Value::Bool(true));
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
