//! iSCSI multipath against tgtd: one tgtd listening on two portals (127.0.0.1 and
//! 127.0.0.2, same port) gives two paths to each LUN. The same-device check reads
//! VPD page 0x83 on every path: the same LUN through both portals is accepted and
//! its identifier recorded; another LUN or target is refused before any I/O even
//! when it has the same size and (all-zero) content, which no content probe could
//! tell apart.

use super::net_iscsi::{server, IQN};
use super::*;

#[test]
fn iscsi_two_portals_of_one_lun_split_50_50_under_rr1_and_in_blocks_under_rr1000() {
    let Some(t) = server(16) else {
        return;
    };
    let second = match t.add_portal("127.0.0.2") {
        Ok(p) => t.uri.replace(&t.portal, &p),
        Err(why) => return skip_or_fail(&why),
    };
    // One pass over the 16 MiB LUN: 4096 reads of 4 KiB at QD 32 under `policy`.
    let pass = |policy: &str| {
        run_json(&[
            "run",
            "-t",
            &t.uri,
            "--path",
            &second,
            "--path-policy",
            policy,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--qd",
            "32",
            "--passes",
            "1",
        ])
    };
    let r = pass("rr:1");
    let run0 = r.run(0);
    let p = &run0.paths;
    assert_eq!(p.len(), 2);
    assert_eq!(
        (p[0].uri.as_str(), p[1].uri.as_str()),
        (t.uri.as_str(), second.as_str())
    );
    // 16 MiB in 4 KiB reads, all answered, none re-issued.
    assert_eq!(p[0].ios + p[1].ios, 4096, "{p:?}");
    assert_eq!(run0.totals.read.ios, 4096);
    assert_eq!(
        (p[0].errors, p[1].errors, p[0].reissued, p[1].reissued),
        (0, 0, 0, 0)
    );
    let share = p[0].ios as f64 / 4096.0;
    assert!(
        (0.45..=0.55).contains(&share),
        "path 0 carried {share}: {p:?}"
    );
    // Both portals reported the LUN's VPD 0x83 identifier, and it is the same.
    let id = p[0]
        .device_id
        .as_deref()
        .expect("path 0's device identifier");
    assert!(id.starts_with("naa."), "{id}");
    assert_eq!(p[1].device_id.as_deref(), Some(id));
    assert_eq!(r.wire_run(0)["paths"][1]["device_id"], id);
    // rr:1000: blocks of 1000 I/Os, path 0 first: 1000 + 1000 + 96 on path 0.
    let r = pass("rr:1000");
    let p = &r.run(0).paths;
    assert_eq!((p[0].ios, p[1].ios), (2096, 2000), "{p:?}");
}

#[test]
fn iscsi_path_to_another_lun_or_target_is_refused_naming_both() {
    let Some(t) = server(16) else {
        return;
    };
    // Same size, same (zero) content: only the device identifier differs.
    let other_target = t.add_lun(2, "iqn.2026-11.io.ioscope:other", 1, 16);
    let other_lun = t.add_lun(1, IQN, 2, 16);
    let (other_target, other_lun) = match (other_target, other_lun) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(why), _) | (_, Err(why)) => return skip_or_fail(&why),
    };
    let d = tempdir();
    for other in [&other_target, &other_lun] {
        let json = d.path().join("refused.json");
        let o = run(&[
            "run",
            "-t",
            &t.uri,
            "--path",
            other,
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--duration",
            "1s",
            "--json",
            json.to_str().unwrap(),
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&t.uri) && err.contains(other.as_str()),
            "{err}"
        );
        assert!(err.contains("VPD page 0x83"), "{err}");
        assert!(!json.exists(), "a refused command wrote its result file");
    }
    // Before any I/O: the refused randwrite wrote nothing to path 0's LUN.
    let bytes = std::fs::read(&t.lun_file).unwrap();
    assert!(bytes.iter().all(|&b| b == 0), "path 0's LUN was written");
}
