//! fio's network jobs (`ioengine=net`) through `ioscope run`, in the shapes of fio's
//! netio examples: a receiver and a sender in one file meet on loopback and every
//! byte sent is a byte received; UDP multicast with pingpong in a network namespace
//! of the test's own; vsock either runs or fails naming vsock; a one-ended file runs
//! against a peer the test starts, including fio itself over UDP (its link and
//! sequence messages). Traffic goes only to 127.0.0.1, CID 1 (this machine) and the
//! test's namespace.

use super::*;
use std::process::Stdio;

/// A port free on 127.0.0.1 for TCP and UDP at the time of asking.
fn free_port() -> u16 {
    loop {
        let t = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let p = t.local_addr().unwrap().port();
        if std::net::UdpSocket::bind(("127.0.0.1", p)).is_ok() {
            return p;
        }
    }
}

fn write_job(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// netio.fio's shape: a listening receiver and a sender a second later.
fn netio(port: u16, size: &str) -> String {
    format!(
        "[global]\nioengine=net\nport={port}\nprotocol=tcp\nbs=4k\nsize={size}\n\n\
         [receiver]\nlisten\nrw=read\n\n[sender]\nhostname=127.0.0.1\nstartdelay=1\nrw=write\n"
    )
}

#[test]
fn netio_receiver_and_sender_meet_on_loopback_and_agree_on_every_byte() {
    let d = tempdir();
    let job = write_job(d.path(), "netio.fio", &netio(free_port(), "64m"));
    let fio_json = d.path().join("r.fio.json");
    let r = ioscope_to(
        &d.path().join("r.json"),
        [
            "run".as_ref(),
            job.as_os_str(),
            "-q".as_ref(),
            "--fio-json".as_ref(),
            fio_json.as_os_str(),
        ],
    )
    .expect_code(0);
    let run = r.run(0);
    assert_eq!(run.engine, "net");
    let names: Vec<&str> = run.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["receiver", "sender"]);
    let size = 64u64 << 20;
    assert_eq!(run.workloads[0].totals.read.bytes, size, "receiver");
    assert_eq!(run.workloads[1].totals.write.bytes, size, "sender");
    let st = run.totals.net.streams.as_ref().unwrap();
    assert_eq!((st[0].bytes_received, st[1].bytes_sent), (size, size));
    // The per-interval figures add up to the totals, job by job.
    for (k, want) in [(0usize, size), (1, size)] {
        let sum: u64 = run
            .intervals
            .iter()
            .map(|iv| iv.net.as_ref().unwrap().streams[k].bytes)
            .sum();
        assert_eq!(sum, want, "job {k}'s intervals");
    }
    // The sender's start delay is not its time: its rate is bytes over its own time.
    let gbps = run.totals.net.gbps.unwrap();
    assert!(gbps > 0.0 && st[0].gbps == gbps, "{gbps} vs {:?}", st[0]);
    assert!(run.duration_s < 30.0);
    let fj = read_json(&fio_json);
    let jobs = fj["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["jobname"], "receiver");
    assert_eq!(jobs[0]["read"]["io_bytes"], size);
    assert_eq!(jobs[1]["job options"]["rw"], "write");
    assert_eq!(jobs[1]["write"]["io_bytes"], size);
    assert!(jobs[0]["read"]["bw_samples"].as_u64().unwrap() >= 1);
}

#[test]
fn a_sender_file_runs_against_a_receiver_file_in_another_process() {
    let d = tempdir();
    let port = free_port();
    let rx = write_job(
        d.path(),
        "rx.fio",
        &format!("[receiver]\nioengine=net\nprotocol=tcp\nport={port}\nlisten\nbs=64k\nsize=16m\nrw=read\n"),
    );
    let tx = write_job(
        d.path(),
        "tx.fio",
        &format!("[sender]\nioengine=net\nprotocol=tcp\nport={port}\nhostname=127.0.0.1\nnodelay=1\nbs=64k\nsize=16m\nrw=write\n"),
    );
    let rx_json = d.path().join("rx.json");
    let receiver = Spawned::start([
        "run".as_ref(),
        rx.as_os_str(),
        "-q".as_ref(),
        "--json".as_ref(),
        rx_json.as_os_str(),
    ]);
    // The receiver is listening once its port refuses a second bind.
    let t0 = std::time::Instant::now();
    while std::net::TcpListener::bind(("0.0.0.0", port)).is_ok() {
        assert!(t0.elapsed().as_secs() < 20, "the receiver never listened");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sent = ioscope_to(
        &d.path().join("tx.json"),
        ["run".as_ref(), tx.as_os_str(), "-q".as_ref()],
    )
    .expect_code(0);
    let got = receiver.finish_result(&rx_json).expect_code(0);
    assert_eq!(sent.run(0).workloads[0].totals.write.bytes, 16 << 20);
    assert_eq!(got.run(0).workloads[0].totals.read.bytes, 16 << 20);
    assert!(sent.run(0).workloads[0].target.contains("nodelay"));
}

/// A network namespace of the test's own where loopback carries multicast, deleted
/// on drop.
struct McastNs(String);

impl McastNs {
    fn new() -> Result<McastNs, String> {
        if !is_root() {
            return Err("not root".into());
        }
        let ns = McastNs(format!("ioscope-mcast-{}", std::process::id()));
        NetnsPair::ip(&["netns", "add", &ns.0])?;
        NetnsPair::ip(&["-n", &ns.0, "link", "set", "lo", "up", "multicast", "on"])?;
        NetnsPair::ip(&["-n", &ns.0, "route", "add", "224.0.0.0/4", "dev", "lo"])?;
        Ok(ns)
    }
}

impl Drop for McastNs {
    fn drop(&mut self) {
        let _ = NetnsPair::ip(&["netns", "del", &self.0]);
    }
}

#[test]
fn udp_multicast_pingpong_reaches_both_readers_in_a_namespace() {
    let ns = match McastNs::new() {
        Ok(ns) => ns,
        Err(e) => return skip_or_fail(&format!("multicast namespace: {e}")),
    };
    let d = tempdir();
    // netio_multicast.fio's shape, 1 MiB of 64-byte datagrams.
    let job = write_job(
        d.path(),
        "mc.fio",
        "[global]\nioengine=net\nprotocol=udp\nbs=64\nsize=1m\nport=10000\n\
         hostname=239.0.0.0\nttl=1\n\n[pingpong_reader]\npingpong=1\nrw=read\n\n\
         [normal_reader]\nrw=read\n\n[pingpong_writer]\nstartdelay=1\npingpong=1\nrw=write\n",
    );
    let json = d.path().join("r.json");
    let o = Command::new("ip")
        .args(["netns", "exec", &ns.0, env!("CARGO_BIN_EXE_ioscope"), "run"])
        .arg(&job)
        .args(["-q", "--json"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let r = Ran::read(
        &json,
        "ioscope run mc.fio".into(),
        o.status.code(),
        stdout(&o),
        stderr(&o),
    )
    .expect_code(0);
    let run = r.run(0);
    let st = run.totals.net.streams.as_ref().unwrap();
    let size = 1u64 << 20;
    // One datagram in flight: the pingpong reader answers each, nothing is lost.
    assert_eq!(
        (st[0].bytes_received, st[0].datagrams_lost),
        (size, 0),
        "{st:?}"
    );
    assert_eq!(st[2].bytes_sent, size);
    // The other reader has no flow control: when it is off the CPU for ~10 ms (two
    // cores, three busy threads) its socket buffer (~270 such datagrams) overflows
    // and the kernel drops what comes next. A datagram lost before its last received
    // one is counted (a gap in the sequence numbers); one lost after it cannot be
    // seen by anyone (the close message carries no count, as in fio). So: never more
    // than was sent, and every gap counted; one CI run lost 483 at the tail.
    assert!(
        st[1].bytes_received + 64 * st[1].datagrams_lost <= size,
        "{st:?}"
    );
    assert!(st[1].bytes_received >= size / 2, "{st:?}");
    // The writer's latency is the round trip, one per datagram.
    let tps = st[2].tps.unwrap();
    let lat = st[2].latency_us.as_ref().unwrap();
    assert!(tps > 0.0 && lat.mean > 0.0, "{tps} {lat:?}");
    assert!(
        (1e6 / lat.mean / tps - 1.0).abs() < 0.2,
        "1/latency {} vs {tps}/s",
        1e6 / lat.mean
    );
    assert!(run.workloads[2].target.starts_with("udp://239.0.0.0:10000"));
}

#[test]
fn vsock_jobs_run_or_fail_naming_vsock() {
    let d = tempdir();
    let port = free_port();
    // netio_vsock.fio's shape, sending to CID 1 (this machine).
    let job = write_job(
        d.path(),
        "vsock.fio",
        &format!(
            "[global]\nioengine=net\nport={port}\nprotocol=vsock\nbs=4k\nsize=4m\n\n\
             [receiver]\nlisten\nrw=read\n\n[sender]\nhostname=1\nrw=write\n"
        ),
    );
    let r = ioscope_result(["run".as_ref(), job.as_os_str(), "-q".as_ref()]);
    match r.code {
        Some(0) => {
            let st = r.run(0).totals.net.streams.clone().unwrap();
            assert_eq!((st[0].bytes_received, st[1].bytes_sent), (4 << 20, 4 << 20));
        }
        Some(1) => {
            assert!(r.stderr.contains("vsock"), "{}", r.stderr);
            assert_eq!(r.run(0).end_reason, ioscope::result::EndReason::Error);
        }
        other => panic!("exit {other:?}: {}", r.stderr),
    }
}

#[test]
fn fio_itself_sends_udp_to_an_ioscope_receiver() {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("SKIPPED: fio is not installed");
        return;
    }
    let d = tempdir();
    let port = free_port();
    let rx = write_job(
        d.path(),
        "rx.fio",
        &format!("[receiver]\nioengine=net\nprotocol=udp\nport={port}\nbs=1k\nsize=4m\nrw=read\n"),
    );
    let tx = write_job(
        d.path(),
        "tx.fio",
        &format!(
            "[sender]\nioengine=net\nprotocol=udp\nport={port}\nhostname=127.0.0.1\nbs=1k\n\
             size=4m\nrw=write\nrate=8m\n"
        ),
    );
    let json = d.path().join("rx.json");
    // The duration only bounds the test should fio's close message be lost.
    let receiver = Spawned::start([
        "run".as_ref(),
        rx.as_os_str(),
        "-q".as_ref(),
        "--duration".as_ref(),
        "60s".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    let t0 = std::time::Instant::now();
    while std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
        assert!(t0.elapsed().as_secs() < 20, "the receiver never bound");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let fio = Command::new("fio").arg(&tx).output().unwrap();
    assert!(fio.status.success(), "{}", stderr(&fio));
    let got = receiver.finish_result(&json).expect_code(0);
    let st = &got.run(0).totals.net.streams.as_ref().unwrap()[0];
    // fio's link-open started it and its close message ended it (before the
    // duration); its sequence trailers account for the datagrams up to the last
    // one received: received or counted lost (a loss after it has nothing behind
    // it to show the gap).
    let accounted = st.bytes_received + 1024 * st.datagrams_lost;
    assert!(
        accounted <= 4 << 20 && st.bytes_received >= 1 << 20,
        "{st:?}"
    );
    assert_eq!(got.run(0).end_reason, ioscope::result::EndReason::Passes);
}

#[test]
fn bad_network_jobs_are_refused_where_they_are_written() {
    let d = tempdir();
    for (text, want) in [
        (
            "[r]\nioengine=net\nprotocol=udp\nport=9\nlisten\nrw=read\nsize=1m\n",
            "listen is for TCP",
        ),
        (
            "[r]\nioengine=net\nport=9\nrw=randread\nsize=1m\nlisten\n",
            "cannot be random",
        ),
        (
            "[r]\nioengine=net\nprotocol=unix\nport=9\nrw=read\nsize=1m\n",
            "no port",
        ),
        (
            "[r]\nioengine=net\nrw=write\nsize=1m\nhostname=h\n",
            "needs port=",
        ),
        (
            "[r]\nioengine=net\nport=9\nrw=read\nsize=1m\n",
            "a receiver needs listen",
        ),
        (
            "[r]\nioengine=net\nport=9\nlisten\nhostname=10.0.0.1\nrw=read\nsize=1m\n",
            "listening end",
        ),
    ] {
        let job = write_job(d.path(), "bad.fio", text);
        let o = run(&["run", job.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(want) && e.contains("bad.fio:"), "{text}: {e}");
    }
}
