//! iSCSI targets against a real server: tgtd on 127.0.0.1 with a free portal port and
//! its own control port, one LUN backed by a file in a temp directory, killed by PID
//! on drop (tgtd ignores SIGTERM).

use super::*;
use std::time::{Duration, Instant};

pub(super) const IQN: &str = "iqn.2026-11.io.ioscope:test";

/// A tgtd process serving one LUN (more with [`Tgtd::add_lun`]).
pub(super) struct Tgtd {
    child: std::process::Child,
    pub(super) uri: String,
    pub(super) portal: String,
    pub(super) port: u16,
    pub(super) lun_file: PathBuf,
    control: String,
    dir: tempfile::TempDir,
}

impl Tgtd {
    pub(super) fn start(size_mib: u64) -> Result<Tgtd, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        Self::start_on(port, size_mib)
    }

    /// The same on portal port `port` (a server started again where it was).
    fn start_on(port: u16, size_mib: u64) -> Result<Tgtd, String> {
        Self::start_in(None, "127.0.0.1", port, size_mib)
    }

    /// The same with its portal on `host`:`port` inside the network namespace
    /// `netns` of the test's own (`ip netns exec` execs tgtd: the child's PID is
    /// tgtd's; tgtadm reaches it over its unix socket from here).
    pub(super) fn start_in(
        netns: Option<&str>,
        host: &str,
        port: u16,
        size_mib: u64,
    ) -> Result<Tgtd, String> {
        if !is_root() {
            return Err("tgtd needs root".into());
        }
        if Command::new("tgtadm").arg("--help").output().is_err() {
            return Err("tgt is not installed (Debian package tgt)".into());
        }
        let dir = tempdir();
        let lun_file = dir.path().join("lun.img");
        std::fs::File::create(&lun_file)
            .and_then(|f| f.set_len(size_mib << 20))
            .map_err(|e| e.to_string())?;
        // The control port names tgtd's management socket (tgtd takes numbers below
        // 32768); derived from the free portal port, so parallel tests differ.
        let control = (1000 + port % 30000).to_string();
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "tgtd"]);
                c
            }
            None => Command::new("tgtd"),
        };
        let child = cmd
            .args([
                "-f",
                "-C",
                &control,
                "--iscsi",
                &format!("portal={host}:{port}"),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("starting tgtd: {e}"))?;
        let mut t = Tgtd {
            child,
            uri: format!("iscsi://{host}:{port}/{IQN}/1"),
            portal: format!("{host}:{port}"),
            port,
            lun_file,
            control,
            dir,
        };
        let t0 = Instant::now();
        while !t.adm(&["--op", "show", "--mode", "target"]) {
            if let Ok(Some(st)) = t.child.try_wait() {
                return Err(format!("tgtd exited at start: {st}"));
            }
            if t0.elapsed() > Duration::from_secs(10) {
                return Err("tgtd did not answer within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let lun = t.lun_file.to_str().unwrap().to_string();
        let adm = |args: &[&str]| t.adm(args);
        let ok = adm(&["--op", "new", "--mode", "target", "--tid", "1", "-T", IQN])
            && adm(&[
                "--op",
                "new",
                "--mode",
                "logicalunit",
                "--tid",
                "1",
                "--lun",
                "1",
                "-b",
                &lun,
            ])
            && adm(&[
                "--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL",
            ]);
        if !ok {
            return Err("tgtadm could not set up the target".into());
        }
        Ok(t)
    }

    /// Listens on `host` too, on the same port: a second portal to every LUN.
    pub(super) fn add_portal(&self, host: &str) -> Result<String, String> {
        let portal = format!("{host}:{}", self.port);
        if !self.adm(&[
            "--op",
            "new",
            "--mode",
            "portal",
            "--param",
            &format!("portal={portal}"),
        ]) {
            return Err(format!("tgtadm could not add the portal {portal}"));
        }
        Ok(portal)
    }

    /// Adds LUN `lun` of `size_mib` MiB (a new file) to target `tid`, creating and
    /// binding the target as `iqn` when `tid` is new; its URI on the first portal.
    pub(super) fn add_lun(
        &self,
        tid: u32,
        iqn: &str,
        lun: u32,
        size_mib: u64,
    ) -> Result<String, String> {
        let file = self.dir.path().join(format!("lun-{tid}-{lun}.img"));
        std::fs::File::create(&file)
            .and_then(|f| f.set_len(size_mib << 20))
            .map_err(|e| e.to_string())?;
        let tid_s = tid.to_string();
        let known = self.adm(&["--op", "show", "--mode", "target", "--tid", &tid_s]);
        let ok = (known
            || (self.adm(&[
                "--op", "new", "--mode", "target", "--tid", &tid_s, "-T", iqn,
            ]) && self.adm(&[
                "--op", "bind", "--mode", "target", "--tid", &tid_s, "-I", "ALL",
            ])))
            && self.adm(&[
                "--op",
                "new",
                "--mode",
                "logicalunit",
                "--tid",
                &tid_s,
                "--lun",
                &lun.to_string(),
                "-b",
                file.to_str().unwrap(),
            ]);
        if !ok {
            return Err(format!("tgtadm could not add LUN {lun} to target {tid}"));
        }
        Ok(format!("iscsi://127.0.0.1:{}/{iqn}/{lun}", self.port))
    }

    /// Runs tgtadm against this tgtd; true on success.
    fn adm(&self, args: &[&str]) -> bool {
        Command::new("tgtadm")
            .args(["-C", &self.control, "--lld", "iscsi"])
            .args(args)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    fn kill(&mut self) {
        // SAFETY: signalling our own child by its PID.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Drop for Tgtd {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

pub(super) fn server(size_mib: u64) -> Option<Tgtd> {
    match Tgtd::start(size_mib) {
        Ok(t) => Some(t),
        Err(why) => {
            skip_or_fail(&format!("tgtd: {why}"));
            None
        }
    }
}

#[test]
fn iscsi_exact_reads_and_clean_verified_writes() {
    let Some(t) = server(16) else {
        return;
    };
    let r = run_json(&[
        "run", "-t", &t.uri, "--rw", "randread", "--bs", "4k", "--qd", "16", "--passes", "1",
    ]);
    assert_eq!(r.run(0).engine, "iscsi");
    // The LUN's size from READ CAPACITY (16): 16 MiB, 4096 reads of 4 KiB.
    assert_eq!(r.run(0).totals.read.ios, 4096);
    let r = run_json(&[
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randrw",
        "--bs",
        "8k",
        "--qd",
        "16",
        "--size",
        "2m",
        "--passes",
        "3",
        "--verify-after",
    ]);
    let run0 = r.run(0);
    let v = run0.verify.as_ref().expect("verify counts");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert!(v.units_checked > 0, "{v:?}");
    assert_eq!(run0.totals.read.ios + run0.totals.write.ios, 768);
}

// The own initiator against tgtd's defaults: 1 MiB writes are longer than the
// 8 KiB segments and the 64 KiB first burst tgtd takes (immediate data, then
// R2Ts answered with Data-Outs; then without immediate data and with the first
// burst unsolicited), 200 commands are more than its 128-command
// window (the rest wait for MaxCmdSN to move), and tgtd's pings (NOP-In every
// second, the session dropped after two unanswered) are answered: every byte is
// verified and nothing fails.
#[test]
fn iscsi_long_writes_a_deep_queue_and_the_targets_pings_are_carried() {
    let Some(t) = server(16) else {
        return;
    };
    let set = |name: &str, v: &str| {
        t.adm(&[
            "--op", "update", "--mode", "target", "--tid", "1", "--name", name, "--value", v,
        ])
    };
    assert!(set("nop_interval", "1") && set("nop_count", "2"));
    let r = run_json(&[
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randwrite",
        "--bs",
        "1m",
        "--qd",
        "4",
        "--passes",
        "2",
        "--verify-after",
    ]);
    let run0 = r.run(0);
    assert_eq!(run0.totals.write.ios, 32);
    let v = run0.verify.as_ref().expect("verify counts");
    assert_eq!((v.mismatches, v.units_checked > 0), (0, true), "{v:?}");
    // The other way: no immediate data, the first burst unsolicited in Data-Outs.
    assert!(set("InitialR2T", "No") && set("ImmediateData", "No"));
    let r = run_json(&[
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randwrite",
        "--bs",
        "1m",
        "--qd",
        "4",
        "--passes",
        "1",
        "--verify-after",
    ]);
    let v = r.run(0).verify.clone().expect("verify counts");
    assert_eq!((v.mismatches, v.units_checked > 0), (0, true), "{v:?}");
    let r = run_json(&[
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--qd",
        "200",
        "--size",
        "4m",
        "--passes",
        "4",
        "--verify-after",
    ]);
    let run0 = r.run(0);
    assert_eq!(run0.totals.read.ios + run0.totals.write.ios, 4096);
    let v = run0.verify.as_ref().expect("verify counts");
    assert_eq!((v.mismatches, v.units_checked > 0), (0, true), "{v:?}");
    // 3.5 s at 20 I/Os a second: three pings or more, each answered in time
    // (tgtd's second is its own timer; one ping more or less changes nothing).
    let r = run_json(&[
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randread",
        "--qd",
        "1",
        "--rate",
        "20",
        "--duration",
        "3500ms",
    ]);
    let run0 = r.run(0);
    assert!(run0.totals.read.ios >= 50, "{}", run0.totals.read.ios);
    assert_eq!(run0.totals.read.errors, 0);
}

#[test]
fn iscsi_writes_reach_the_lun_and_damage_behind_its_back_is_found() {
    let Some(t) = server(8) else {
        return;
    };
    let d = tempdir();
    let journal = d.path().join("journal");
    let o = run(&[
        "run",
        "-t",
        &t.uri,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "1m",
        "--passes",
        "1",
        "--journal",
        journal.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["verify", "--journal", journal.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    // Change bytes of the backing file behind the server's back.
    let mut bytes = std::fs::read(&t.lun_file).unwrap();
    assert!(
        bytes[..1 << 20].iter().any(|&b| b != 0),
        "nothing reached the LUN"
    );
    for b in &mut bytes[300_000..300_016] {
        *b ^= 0xff;
    }
    std::fs::write(&t.lun_file, &bytes).unwrap();
    let o = run(&["verify", "--journal", journal.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
    // The 4 KiB unit holding byte 300000 is named, and only it.
    let out = stdout(&o);
    assert!(
        out.contains("1 mismatches") && out.contains("offset 299008"),
        "{out}"
    );
}

#[test]
fn iscsi_partial_blocks_are_refused_at_plan_time() {
    let Some(t) = server(4) else {
        return;
    };
    let o = run(&[
        "run", "-t", &t.uri, "--rw", "randread", "--bs", "1000", "--passes", "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("512-byte blocks"), "{}", stderr(&o));
}

#[test]
fn iscsi_wrong_target_or_missing_library_is_a_run_failure() {
    let Some(t) = server(4) else {
        return;
    };
    let bad = t.uri.replace(IQN, "iqn.2026-11.io.ioscope:nope");
    let o = run(&[
        "run",
        "-t",
        &bad,
        "--rw",
        "randread",
        "--duration",
        "1s",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(&t.portal), "{}", stderr(&o));
    let o = ioscope()
        .env("IOSCOPE_LIBISCSI", "/nonexistent/libiscsi.so.7")
        .args(["run", "-t", &t.uri, "--rw", "randread", "--duration", "1s"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("libiscsi7"), "{}", stderr(&o));
}

#[test]
fn iscsi_server_killed_mid_run_fails_fast_naming_it() {
    let Some(mut t) = server(64) else {
        return;
    };
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut child = Spawned::start([
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randread",
        "--qd",
        "8",
        "--duration",
        "30s",
        "--interval",
        "500ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Killed once the run measures (the result must hold its intervals so far).
    child.wait_first_interval(&json, FIRST_INTERVAL_TIMEOUT);
    let t0 = Instant::now();
    t.kill();
    let out = child.finish();
    eprintln!(
        "iSCSI run ended {:?} after its server was killed",
        t0.elapsed()
    );
    // The kill resets the connection, so the run ends at once: 44-74 ms after it
    // here, beside a CPU hog too. 5 s tells that from a run waiting out a deadline or
    // its 30 s.
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        e.contains(&format!("connection to {} lost after", t.portal)),
        "{e}"
    );
    let r = read_json(&json);
    assert!(!r["runs"][0]["intervals"].as_array().unwrap().is_empty());
    let events = r["runs"][0]["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "down" && e["detail"].as_str().unwrap().contains(&t.portal)),
        "{events:?}"
    );
}

#[test]
fn iscsi_writes_to_a_lun_with_a_filesystem_are_refused() {
    let Some(t) = server(4) else {
        return;
    };
    let mut bytes = vec![0u8; 4 << 20];
    bytes[1080] = 0x53;
    bytes[1081] = 0xEF;
    std::fs::write(&t.lun_file, &bytes).unwrap();
    let o = run(&[
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randwrite",
        "--passes",
        "1",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ext2/3/4"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&t.lun_file).unwrap(),
        bytes,
        "a refused command wrote"
    );
}

#[test]
fn iscsi_chap_comes_from_the_environment_and_stays_out_of_results() {
    let Some(t) = server(4) else {
        return;
    };
    let (user, secret) = ("ioscope-user", "s3cret-chap-passw0rd");
    assert!(
        t.adm(&[
            "--op",
            "new",
            "--mode",
            "account",
            "--user",
            user,
            "--password",
            secret
        ]) && t.adm(&["--op", "bind", "--mode", "account", "--tid", "1", "--user", user]),
        "tgtadm could not set up CHAP"
    );
    let args = [
        "run", "-t", &t.uri, "--rw", "randread", "--passes", "1", "--size", "1m",
    ];
    let o = run(&[&args[..], &["-q"]].concat());
    assert_eq!(
        o.status.code(),
        Some(1),
        "login without CHAP must fail: {}",
        stderr(&o)
    );
    let d = tempdir();
    let json = d.path().join("r.json");
    let o = ioscope()
        .env("IOSCOPE_ISCSI_USER", user)
        .env("IOSCOPE_ISCSI_PASSWORD", secret)
        .args(args)
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = format!(
        "{}{}{}",
        stdout(&o),
        stderr(&o),
        std::fs::read_to_string(&json).unwrap()
    );
    assert!(
        !all.contains(secret),
        "the CHAP secret leaked into the output"
    );
    assert_eq!(read_json(&json)["runs"][0]["totals"]["read"]["ios"], 256);
}

#[test]
fn iscsi_fio_job_with_ioengine_libiscsi_runs() {
    let Some(t) = server(8) else {
        return;
    };
    let d = tempdir();
    let job = d.path().join("j.fio");
    // fio escapes the URI's colons in filename=.
    let escaped = t.uri.replace(':', "\\:");
    std::fs::write(
        &job,
        format!(
            "[j]\nioengine=libiscsi\nfilename={escaped}\nrw=randread\nbs=4k\niodepth=16\nsize=2m\n"
        ),
    )
    .unwrap();
    let r = run_json(&["run", job.to_str().unwrap()]);
    assert_eq!(r.run(0).engine, "iscsi");
    assert_eq!(r.run(0).totals.read.ios, 512);
}

#[test]
fn iscsi_three_sessions_each_carry_io_and_sum_to_the_total() {
    let Some(t) = server(16) else {
        return;
    };
    let r = run_json(&[
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--streams",
        "6",
        "--workers",
        "1",
        "--connections",
        "3",
        "--duration",
        "2s",
        "--interval",
        "500ms",
    ]);
    let run = r.run(0);
    assert_eq!(run.connections.len(), 3, "{:?}", run.connections);
    for c in &run.connections {
        assert!(c.ios > 0 && c.errors == 0, "{:?}", run.connections);
    }
    let sum: u64 = run.connections.iter().map(|c| c.ios).sum();
    assert_eq!(sum, run.totals.all.ios);
}

#[test]
fn iscsi_chap_from_a_credentials_file_checked_for_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let Some(t) = server(4) else {
        return;
    };
    let (user, secret) = ("ioscope-file-user", "f1le-chap-s3cret");
    assert!(
        t.adm(&[
            "--op",
            "new",
            "--mode",
            "account",
            "--user",
            user,
            "--password",
            secret
        ]) && t.adm(&["--op", "bind", "--mode", "account", "--tid", "1", "--user", user]),
        "tgtadm could not set up CHAP"
    );
    let d = tempdir();
    let cred = d.path().join("chap.conf");
    std::fs::write(
        &cred,
        format!("# CHAP\nusername = {user}\npassword = {secret}\n"),
    )
    .unwrap();
    let json = d.path().join("r.json");
    let args = [
        "run",
        "-t",
        &t.uri,
        "--rw",
        "randread",
        "--passes",
        "1",
        "--size",
        "1m",
        "--credentials",
        cred.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    // Readable by others: refused as bad input, naming the file and its mode.
    std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("chap.conf") && e.contains("0644"), "{e}");
    assert!(!e.contains(secret));
    assert!(!json.exists());
    // Owner-only: CHAP logs in, and the secret appears in nothing written.
    std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut all = format!("{}{}", stdout(&o), stderr(&o));
    for f in std::fs::read_dir(d.path()).unwrap() {
        let p = f.unwrap().path();
        if p != cred {
            all.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
        }
    }
    assert!(
        !all.contains(secret),
        "the CHAP secret leaked into the output"
    );
    assert_eq!(read_json(&json)["runs"][0]["totals"]["read"]["ios"], 256);
}

#[test]
fn iscsi_target_restarted_mid_run_is_logged_in_again_under_on_error_continue() {
    let Some(mut t) = server(64) else {
        return;
    };
    let port: u16 = t.portal.rsplit(':').next().unwrap().parse().unwrap();
    let portal = t.portal.clone();
    let uri = t.uri.clone();
    // Started again on its portal once the run has noticed the loss, so the
    // engine's first logins meet a closed port.
    let (_t2, _) = assert_run_continues_after_restart(
        &uri,
        "6s",
        &portal,
        || t.kill(),
        || Tgtd::start_on(port, 64).expect("tgtd again on its portal"),
    );
}
