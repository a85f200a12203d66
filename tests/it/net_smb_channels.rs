//! SMB3 multichannel against a real smbd, inside network namespaces these tests
//! create (so the extra addresses and the links exist only there): two channels of
//! one session over two addresses carry the I/O between them, the channels can come
//! from the interfaces the server advertises, and a channel whose link is cut (a veth
//! taken down: packets vanish, no RST) is invisible to an open-loop workload — its
//! requests are re-issued on the other channel, and it is bound again when the link
//! returns. ioscope runs inside the client's namespace with `ip netns exec`.

use super::net_smb::{smb_run_with, with_password, Smbd, SmbdAt, PASSWORD};
use super::*;
use std::time::Duration;

/// Network namespaces of this test's own, deleted on drop (with their veths).
struct Netns {
    names: Vec<String>,
}

impl Netns {
    /// One namespace whose loopback also holds 127.0.0.2: two addresses of one host.
    fn loopback_pair(tag: &str) -> Result<Netns, String> {
        let ns = Netns::add(&[&format!("ios-mc{tag}{}", std::process::id())])?;
        NetnsPair::ip(&[
            "-n",
            &ns.names[0],
            "addr",
            "add",
            "127.0.0.2/8",
            "dev",
            "lo",
        ])?;
        Ok(ns)
    }

    /// A client and a server namespace joined by two veth pairs (two links):
    /// 10.213.N.1 (client) — 10.213.N.2 (server) for N = 0, 1. The server's end of
    /// link N is [`Netns::server_link`]`(tag, N)`; `tag` keeps tests apart.
    fn two_links(tag: &str) -> Result<Netns, String> {
        let pid = std::process::id();
        let ns = Netns::add(&[&format!("ios-mcc{tag}{pid}"), &format!("ios-mcs{tag}{pid}")])?;
        let (c, s) = (&ns.names[0], &ns.names[1]);
        for n in 0..2 {
            let (vc, vs) = (format!("mcc{n}{tag}-{pid}"), Netns::server_link(tag, n));
            NetnsPair::ip(&[
                "-n", c, "link", "add", &vc, "type", "veth", "peer", "name", &vs, "netns", s,
            ])?;
            NetnsPair::ip(&[
                "-n",
                c,
                "addr",
                "add",
                &format!("10.213.{n}.1/24"),
                "dev",
                &vc,
            ])?;
            NetnsPair::ip(&[
                "-n",
                s,
                "addr",
                "add",
                &format!("10.213.{n}.2/24"),
                "dev",
                &vs,
            ])?;
            NetnsPair::ip(&["-n", c, "link", "set", &vc, "up"])?;
            NetnsPair::ip(&["-n", s, "link", "set", &vs, "up"])?;
        }
        Ok(ns)
    }

    /// The server's end of link `n` of [`Netns::two_links`]`(tag)`.
    fn server_link(tag: &str, n: usize) -> String {
        format!("mcs{n}{tag}-{}", std::process::id())
    }

    fn add(names: &[&str]) -> Result<Netns, String> {
        if !is_root() {
            return Err("network namespaces need root".into());
        }
        let mut ns = Netns { names: Vec::new() };
        for n in names {
            NetnsPair::ip(&["netns", "add", n])?;
            ns.names.push(n.to_string());
            NetnsPair::ip(&["-n", n, "link", "set", "lo", "up"])?;
        }
        Ok(ns)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// ioscope inside namespace `ns`, the test password in its environment.
fn ioscope_in(ns: &str) -> Command {
    let plain = with_password(PASSWORD);
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).arg(plain.get_program());
    for (k, v) in plain.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

/// Runs ioscope in `ns` with `--json DIR/r.json`.
#[track_caller]
fn run_in(ns: &str, dir: &Path, args: &[&str]) -> Ran {
    smb_run_with(ioscope_in(ns), dir, args)
}

/// A namespace and an smbd inside it on `addrs`, or `None` (skipped) when this
/// machine cannot have them.
fn smbd_in(ns: Result<Netns, String>, server_ns: usize, addrs: &[&str]) -> Option<(Netns, Smbd)> {
    let ns = match ns {
        Ok(ns) => ns,
        Err(why) => {
            skip_or_fail(&format!("namespaces: {why}"));
            return None;
        }
    };
    let at = SmbdAt {
        netns: Some(&ns.names[server_ns]),
        addrs,
    };
    match Smbd::start_at(at, "") {
        Ok(s) => Some((ns, s)),
        Err(why) => {
            skip_or_fail(&format!("smbd: {why}"));
            None
        }
    }
}

#[test]
fn smb_two_channels_of_one_session_both_carry_io() {
    let Some((ns, s)) = smbd_in(Netns::loopback_pair("a"), 0, &["127.0.0.1", "127.0.0.2"]) else {
        return;
    };
    let d = tempdir();
    let (a, b) = (
        s.uri_at("127.0.0.1", "m.dat"),
        s.uri_at("127.0.0.2", "m.dat"),
    );
    // Two addresses given: one channel on each, rr:1.
    let r = run_in(
        &ns.names[0],
        d.path(),
        &[
            "run",
            "-t",
            &a,
            "--path",
            &b,
            "--channels",
            "2",
            "--size",
            "8m",
            "--rw",
            "randread",
            "--bs",
            "8k",
            "--qd",
            "8",
            "--duration",
            "2s",
        ],
    )
    .expect_code(0);
    let run = r.run(0);
    let p: Vec<(String, u64)> = run.paths.iter().map(|p| (p.uri.clone(), p.ios)).collect();
    assert_eq!(p.len(), 2, "{p:?}");
    assert_eq!((p[0].0.as_str(), p[1].0.as_str()), (a.as_str(), b.as_str()));
    let total = run.totals.read.ios as f64;
    for (uri, ios) in &p {
        let share = *ios as f64 / total;
        assert!((0.45..=0.55).contains(&share), "{uri}: {ios} of {total}");
    }
    assert_eq!(run.totals.read.errors, 0);
    assert_eq!(
        r.wire_run(0)["smb"][0]["channels"],
        2,
        "{}",
        r.wire_run(0)["smb"]
    );
    assert!(run.intervals.iter().all(|iv| iv.paths.len() == 2));
    // No address given: three channels over what the server advertises (both of its
    // addresses), the target's own first, round and round.
    let r = run_in(
        &ns.names[0],
        d.path(),
        &[
            "run",
            "-t",
            &a,
            "--channels",
            "3",
            "--rw",
            "randread",
            "--bs",
            "8k",
            "--qd",
            "6",
            "--duration",
            "1s",
        ],
    )
    .expect_code(0);
    let uris: Vec<&str> = r.run(0).paths.iter().map(|p| p.uri.as_str()).collect();
    assert_eq!(uris, [a.as_str(), b.as_str(), a.as_str()]);
    assert!(
        r.run(0).paths.iter().all(|p| p.ios > 0),
        "paths {:?}; events {:?}",
        r.run(0)
            .paths
            .iter()
            .map(|p| (p.ios, p.errors, p.state.as_str()))
            .collect::<Vec<_>>(),
        r.run(0)
            .events
            .iter()
            .map(|e| (e.t_s, e.path, e.kind.as_str()))
            .collect::<Vec<_>>()
    );
    // A channel to another file is refused before any I/O, naming both.
    let other = s.uri_at("127.0.0.2", "other.dat");
    let o = ioscope_in(&ns.names[0])
        .args(["run", "-t", &a, "--path", &other, "--duration", "1s"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&a) && err.contains(&other), "{err}");
}

#[test]
fn smb_a_cut_channel_is_invisible_to_an_open_loop_workload() {
    cut_one_channel(1);
}

/// Channel 0 is the connection the session was set up on (the crate's primary
/// channel, which logs on and owns the session): losing it must not lose the session
/// — the other channel carries the I/O, and channel 0 is bound again as a new channel
/// of the same session when its link returns.
#[test]
fn smb_a_cut_primary_channel_is_invisible_to_an_open_loop_workload() {
    cut_one_channel(0);
}

/// Two channels over two links under a 300 IOPS open-loop load; link `cut`'s veth is
/// taken down over t ≈ 2 … 4.5 s: no workload error, ≥ 97 % achieved, events and
/// per-channel intervals show the loss and the return, and the channel carries I/O
/// again afterwards.
fn cut_one_channel(cut: usize) {
    let tag = ["a", "b"][cut];
    let Some((ns, s)) = smbd_in(Netns::two_links(tag), 1, &["10.213.0.2", "10.213.1.2"]) else {
        return;
    };
    let (client, server) = (ns.names[0].clone(), ns.names[1].clone());
    std::fs::write(s.share().join("c.dat"), vec![5u8; 16 << 20]).unwrap();
    let d = tempdir();
    let json = d.path().join("r.json");
    let (a, b) = (
        s.uri_at("10.213.0.2", "c.dat"),
        s.uri_at("10.213.1.2", "c.dat"),
    );
    let rate = 300.0;
    let secs = 8.0;
    let mut child = ioscope_in(&client)
        .args(["run", "-t", &a, "--path", &b, "--channels", "2"])
        .args([
            "--rw", "randread", "--bs", "4k", "--rate", "300", "--qd", "32",
        ])
        .args([
            "--duration",
            "8s",
            "--interval",
            "500ms",
            "--io-timeout",
            "500ms",
        ])
        .args(["--path-retry", "500ms", "-q", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn ioscope");
    // Wait for the first interval (the run is measuring), then cut link `cut` (the
    // server's end of the veth: the client's packets vanish) over t ≈ 2 … 4.5 s.
    let stream = intervals_jsonl(&json);
    let t0 = std::time::Instant::now();
    while std::fs::read_to_string(&stream)
        .unwrap_or_default()
        .lines()
        .next()
        .is_none()
    {
        if t0.elapsed() > Duration::from_secs(30) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("no first interval: {}", stderr(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let dev = Netns::server_link(tag, cut);
    std::thread::sleep(Duration::from_millis(1500));
    NetnsPair::ip(&["-n", &server, "link", "set", &dev, "down"]).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    NetnsPair::ip(&["-n", &server, "link", "set", &dev, "up"]).unwrap();
    let o = child.wait_with_output().unwrap();
    let r = Ran::read(
        &json,
        "ioscope run (channel cut)".into(),
        o.status.code(),
        stdout(&o),
        stderr(&o),
    )
    .expect_code(0);
    let run = r.run(0);
    let per_interval: Vec<_> = run
        .intervals
        .iter()
        .map(|iv| (iv.t_s, iv.paths[cut].ios, iv.paths[cut].state.clone()))
        .collect();
    let kinds: Vec<(u32, &str)> = run
        .events
        .iter()
        .map(|e| (e.path, e.kind.as_str()))
        .collect();
    assert_eq!(run.totals.read.errors, 0, "the workload saw errors");
    let done = run.totals.read.ios as f64;
    assert!(
        done >= 0.97 * rate * secs,
        "achieved {done} of {}; events {kinds:?}",
        rate * secs
    );
    let c = cut as u32;
    let down = run.events.iter().find(|e| e.path == c && e.kind == "down");
    let up = run.events.iter().find(|e| e.path == c && e.kind == "up");
    let (Some(down), Some(up)) = (down, up) else {
        panic!(
            "events {:?}; path 1 per interval {per_interval:?}",
            run.events
        );
    };
    assert!((1.5..4.5).contains(&down.t_s), "down at {}", down.t_s);
    assert!(
        up.t_s > down.t_s && up.t_s < 7.5,
        "up at {}; events {:?}",
        up.t_s,
        run.events
    );
    assert!(
        run.intervals
            .iter()
            .any(|iv| iv.paths[cut].ios == 0 && iv.paths[cut].state == "down"),
        "no interval shows channel {cut} down and idle: {per_interval:?}"
    );
    let after: u64 = run
        .intervals
        .iter()
        .filter(|iv| iv.t_s > up.t_s + 0.5)
        .map(|iv| iv.paths[cut].ios)
        .sum();
    assert!(
        after > 50,
        "channel {cut} after it came back at {}: {after} I/Os; {per_interval:?}",
        up.t_s
    );
    assert!(run.paths[0].ios > 0 && run.paths[1].ios > 0);
    drop(client);
}
