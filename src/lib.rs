//! ioscope: storage performance measurement that tells the truth — latency at a given
//! load, IOPS, bandwidth and CPU cost, from files, block devices and RAM.
//!
//! Data flows one way: `cli` → `plan` (what to do) → `target` + `engine` (how) →
//! `run` (workers and streams) → `stats` → `report` (the result model and its
//! renderings). A module reads only the layers before it.

pub mod app;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod data;
pub mod engine;
pub mod errors;
pub mod interrupt;
pub mod metrics;
pub mod net;
pub mod plan;
pub mod report;
pub mod result;
pub mod rng;
pub mod run;
pub mod stats;
pub mod stdout;
pub mod sysinfo;
pub mod target;
pub mod trace;
pub mod vocab;
