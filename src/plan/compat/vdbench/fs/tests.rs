//! The file-system reader's mappings of fsd sizes, anchors, fwd skew and shared
//! files, each against what vdbench does with it.

use crate::plan::compat::vdbench::parse_str;
use crate::plan::compat::Translated;
use crate::plan::file_service::FileService;
use crate::plan::model::Rate;

const FSD: &str = "fsd=fsd1,anchor=/a,depth=1,width=2,files=8,size=1m\n";

fn translate(text: &str) -> Translated {
    parse_str("t.parm", text).unwrap_or_else(|e| panic!("{e}"))
}

/// The reader's refusal of `text`, located in "t.parm".
fn refusal(text: &str) -> String {
    match parse_str("t.parm", text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

fn dropped(t: &Translated) -> Vec<&str> {
    t.unsupported.iter().map(|u| u.option.as_str()).collect()
}

#[test]
fn a_size_distribution_goes_into_the_tree_with_the_runs_seed() {
    let t = translate(
        "fsd=fsd1,anchor=/a,files=8,sizes=(64k,25,128k,25,256k,25,1m,25)\n\
         fwd=fwd1,fsd=fsd1,xfersize=4k\nrd=rd1,fwd=fwd1,elapsed=4,interval=1\n",
    );
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    let uri = &t.plan.targets[0].uri;
    assert!(
        uri.ends_with("&size=65536:25,131072:25,262144:25,1048576:25&seed=137"),
        "{uri}"
    );
    assert_eq!(
        t.plan.runs[0].seed, 137,
        "the seed the sizes are drawn from"
    );
    // vdbench's other spellings: one length; (N,0) spreads lengths around N.
    let one = translate(&format!("{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4\n"));
    assert!(one.plan.targets[0].uri.ends_with("&size=1048576"));
    let avg = translate("fsd=fsd1,anchor=/a,size=(1m,0)\nfwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4\n");
    assert_eq!(
        dropped(&avg),
        ["size=(1m,0) — lengths spread around an average of 1m; every file gets 1m"]
    );
}

#[test]
fn a_size_distribution_vdbench_refuses_is_refused() {
    for bad in ["(64k,25,128k)", "(64k,50,128k,40)", "(64k,x,1m,50)"] {
        let text = format!("fsd=fsd1,anchor=/a,size={bad}\nfwd=f,fsd=fsd1\nrd=r,fwd=f\n");
        let e = refusal(&text);
        assert!(
            e.contains("t.parm:1") && e.contains("percentage"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn create_anchors_makes_the_anchor_and_its_parents() {
    let t = translate(&format!(
        "create_anchors=yes\n{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    assert!(t.plan.targets[0].uri.contains("&mkdir=parents&"));
    let no = translate(&format!(
        "create_anchors=no\n{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert!(!no.plan.targets[0].uri.contains("mkdir"));
}

#[test]
fn skew_splits_a_rate_and_the_rest_goes_evenly_to_the_others() {
    let t = translate(&format!(
        "{FSD}fwd=default,fsd=fsd1,xfersize=4k\nfwd=a,skew=50\nfwd=b\nfwd=c\n\
         rd=rd1,fwd=(a,b,c),fwdrate=300,elapsed=4,interval=1\n"
    ));
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    let rates: Vec<Rate> = t.plan.runs[0].workloads.iter().map(|w| w.rate).collect();
    assert_eq!(
        rates,
        [Rate::Iops(150.0), Rate::Iops(75.0), Rate::Iops(75.0)]
    );
    assert!(t.plan.runs[0].workloads.iter().all(|w| w.flow.is_none()));
}

#[test]
fn skew_under_max_holds_the_fwds_to_its_proportion() {
    let t = translate(&format!(
        "{FSD}fwd=default,fsd=fsd1,xfersize=4k\nfwd=a,skew=75,threads=3\nfwd=b,skew=25\n\
         rd=rd1,fwd=(a,b),fwdrate=max,elapsed=4,interval=1\n"
    ));
    let w = &t.plan.runs[0].workloads;
    let (a, b) = (w[0].flow.unwrap(), w[1].flow.unwrap());
    assert_eq!(a.id, b.id, "one flow group");
    // Per stream: 75 % over 3 threads, 25 % over 1: the same weight.
    assert_eq!((a.weight, b.weight), (1, 1));
    let total = |i: usize| f64::from(w[i].flow.unwrap().weight) * f64::from(w[i].streams);
    assert_eq!(total(0) / (total(0) + total(1)), 0.75);
    // Without a skew, max leaves the fwds free (as before).
    let free = translate(&format!(
        "{FSD}fwd=default,fsd=fsd1\nfwd=a\nfwd=b\nrd=rd1,fwd=(a,b),fwdrate=max,elapsed=4\n"
    ));
    assert!(free.plan.runs[0].workloads.iter().all(|w| w.flow.is_none()));
}

#[test]
fn skew_that_does_not_come_to_100_is_refused() {
    for (skews, why) in [
        ("fwd=a,skew=60\nfwd=b,skew=30\n", "adds up to 90.00 %"),
        ("fwd=a,skew=100\nfwd=b\n", "leaving nothing for the 1 fwds"),
        ("fwd=a,skew=150\nfwd=b\n", "skew=150: expected a percentage"),
    ] {
        let text = format!("{FSD}fwd=default,fsd=fsd1\n{skews}rd=rd1,fwd=(a,b),fwdrate=100\n");
        let e = refusal(&text);
        assert!(e.contains(why), "{skews}: {e}");
    }
}

#[test]
fn shared_files_are_handed_out_in_order() {
    let t = translate(&format!(
        "{FSD}fwd=f,fsd=fsd1,fileio=(random,shared),threads=4\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    let w = &t.plan.runs[0].workloads[0];
    assert_eq!(w.file_service, FileService::Sequential);
    assert_eq!(w.streams, 4);
    let e = refusal(&format!(
        "{FSD}fwd=f,fsd=fsd1,fileio=(random,shared),fileselect=random\nrd=r,fwd=f\n"
    ));
    assert!(e.contains("mutually exclusive"), "{e}");
    let del = translate(&format!(
        "{FSD}fwd=f,fsd=fsd1,fileio=(sequential,delete)\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert_eq!(dropped(&del).len(), 1, "{:?}", dropped(&del));
    assert!(parse_str(
        "t.parm",
        &format!("{FSD}fwd=f,fsd=fsd1,fileio=(random,odd)\nrd=r,fwd=f\n")
    )
    .is_err());
}

#[test]
fn files_are_selected_in_order_unless_fileselect_says_random() {
    use crate::plan::model::AccessPattern;
    let service = |extra: &str| {
        let t = translate(&format!(
            "{FSD}fwd=f,fsd=fsd1,xfersize=4k{extra}\nrd=r,fwd=f,elapsed=4\n"
        ));
        let w = &t.plan.runs[0].workloads[0];
        (w.file_service, w.pattern, dropped(&t).len())
    };
    let random = FileService::Random { ios: 256 };
    let (seq, rnd) = (AccessPattern::Sequential, AccessPattern::Random);
    // vdbench's defaults: fileselect=sequential, fileio=sequential.
    assert_eq!(service(""), (FileService::Sequential, seq, 0));
    assert_eq!(service(",fileselect=random"), (random, seq, 0));
    // Words by prefix, as vdbench reads them.
    assert_eq!(service(",fileselect=r,fileio=rand"), (random, rnd, 0));
    assert_eq!(
        service(",fileselect=seq"),
        (FileService::Sequential, seq, 0)
    );
    // vdbench's Poisson curve (midpoint 3 by default, or the number after random);
    // a number without random has no effect in vdbench either.
    let poisson = |midpoint| FileService::Exponential { midpoint, ios: 256 };
    assert_eq!(service(",fileselect=poisson"), (poisson(3.0), seq, 0));
    assert_eq!(service(",fileselect=(random,5)"), (poisson(5.0), seq, 0));
    assert_eq!(service(",fileselect=midpoint=2"), (poisson(2.0), seq, 0));
    assert_eq!(service(",fileselect=5"), (FileService::Sequential, seq, 0));
    // What ioscope cannot do is listed, the rest kept.
    assert_eq!(
        service(",fileselect=(seq,once)"),
        (FileService::Sequential, seq, 1)
    );
    // The operation engines pick their file by fileselect too, uniformly for poisson.
    let t = translate(&format!(
        "{FSD}fwd=f,fsd=fsd1,operation=getattr\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert_eq!(t.plan.runs[0].workloads[0].pattern, seq);
    let t = translate(&format!(
        "{FSD}fwd=f,fsd=fsd1,operation=getattr,fileselect=poisson\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert_eq!(t.plan.runs[0].workloads[0].pattern, rnd);
    assert!(dropped(&t)[0].starts_with("fileselect=poisson (midpoint 3) on a file operation"));
    for bad in [
        "fileselect=often",
        "fileio=sideways",
        "fileio=(sequential,shared)",
    ] {
        let e = refusal(&format!("{FSD}fwd=f,fsd=fsd1,{bad}\nrd=r,fwd=f\n"));
        assert!(
            e.contains("t.parm:2") && e.contains(bad.split('=').next().unwrap()),
            "{bad}: {e}"
        );
    }
}

/// `text` as vdbench runs it with the command-line arguments `args`.
fn translate_run(text: &str, args: &[&str]) -> Translated {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    crate::plan::compat::vdbench::parse_text("t.parm", text, std::path::Path::new("."), &args, None)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn validation_and_its_journal_apply_to_file_system_workloads() {
    let text = format!(
        "{FSD}fwd=fwd1,fsd=fsd1,rdpct=20,xfersize=4k\nfwd=fwd2,fsd=fsd1,operation=getattr\n\
         rd=rd1,fwd=fwd*,fwdrate=max,format=yes,elapsed=10,interval=1\n"
    );
    let t = translate_run(&text, &["-j", "-o", "out"]);
    assert!(dropped(&t).is_empty(), "{:?}", dropped(&t));
    assert!(t.plan.data.verify);
    assert_eq!(t.plan.data.journal.as_deref(), Some("out"));
    let rd = &t.plan.runs[1];
    let own = |name: &str| {
        let w = rd.workloads.iter().find(|w| w.name == name).unwrap();
        w.overrides.data.verify
    };
    // Reads and writes verify as the plan says; getattr writes no bytes.
    assert_eq!(own("fwd1"), None);
    assert_eq!(own("fwd2"), Some(false));
    // validate=yes says the same as -v.
    let t = translate(&format!("validate=yes\n{text}"));
    assert!(t.plan.data.verify && t.plan.data.journal.is_none());
    let plain = translate(&text);
    assert!(!plain.plan.data.verify);
    assert!(plain.plan.runs[1]
        .workloads
        .iter()
        .all(|w| w.overrides.data.verify.is_none()));
}

#[test]
fn validation_with_operations_that_replace_files_is_listed() {
    let text = format!(
        "{FSD}fwd=fwd1,fsd=fsd1,operation=read\nfwd=fwd2,fsd=fsd1,operation=delete\n\
         rd=rd1,fwd=fwd*,fwdrate=max,elapsed=10,interval=1\n"
    );
    let t = translate_run(&text, &["-v"]);
    let d = dropped(&t);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].starts_with("fwd=fwd2 operation=delete with data validation"),
        "{d:?}"
    );
    assert!(dropped(&translate(&text)).is_empty());
}

#[test]
fn an_nfs_or_smb_anchor_becomes_a_tree_on_the_server() {
    let t = translate(
        "fsd=fsd1,anchor=nfs://127.0.0.1:2049/srv/x/t?mountport=20048,depth=2,width=2,files=3,size=4k\n\
         fwd=f,fsd=fsd1,operation=create\nrd=r,fwd=f,elapsed=4\n",
    );
    assert_eq!(
        t.plan.targets[0].uri,
        "tree:nfs://127.0.0.1:2049/srv/x/t?depth=2&width=2&files=3&size=4096&mountport=20048"
    );
    // An SMB anchor is a tree on the share; other schemes are refused.
    let smb = translate("fsd=fsd1,anchor=smb://u@h:4450/s/t,size=4k\nfwd=f,fsd=fsd1\nrd=r,fwd=f\n");
    assert_eq!(
        smb.plan.targets[0].uri,
        "tree:smb://u@h:4450/s/t?depth=1&width=1&files=1&size=4096"
    );
    for (anchor, want) in [
        ("ftp://h/s/t", "not supported"),
        ("nfs://h/e/t,openflags=o_direct", "nothing to bypass"),
        ("smb://h/s/t,openflags=o_direct", "nothing to bypass"),
    ] {
        let text = format!("fsd=fsd1,anchor={anchor},size=4k\nfwd=f,fsd=fsd1\nrd=r,fwd=f\n");
        let e = refusal(&text);
        assert!(e.contains(want), "{anchor}: {e}");
    }
}

const TWO_HOSTS: &str = "hd=default,shell=ssh\nhd=h1,system=a1\nhd=h2,system=a2\n";

#[test]
fn an_fwd_on_every_host_gets_its_threads_on_each() {
    let t = translate(&format!(
        "{TWO_HOSTS}{FSD}fwd=f,fsd=fsd1,threads=3\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    let run = &t.plan.runs[0];
    // Divided among the ranks of the two hosts, 3 each, as vdbench runs them.
    assert_eq!(run.workloads[0].streams, 6);
    let hosts: Vec<(&str, Option<&str>, &[String])> = run
        .hosts
        .iter()
        .map(|h| (h.name.as_str(), h.system.as_deref(), h.targets.as_slice()))
        .collect();
    let fsd1 = ["fsd1".to_string()];
    assert_eq!(
        hosts,
        [("h1", Some("a1"), &fsd1[..]), ("h2", Some("a2"), &fsd1[..])]
    );
}

/// `log=yes` on an fsd (vdbench's debugging log under validation) changes nothing.
#[test]
fn an_fsd_log_is_accepted_without_effect() {
    let with = translate(
        "fsd=fsd1,anchor=/a,depth=1,width=2,files=8,size=1m,log=yes\n\
         fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4\n",
    );
    assert!(with.unsupported.is_empty(), "{:?}", dropped(&with));
    let without = translate(&format!("{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4\n"));
    assert_eq!(with.plan.runs, without.plan.runs);
}

/// One hd with `clients=3` is three hosts on its system: the fwd's threads on each.
#[test]
fn host_clients_run_the_fwd_each() {
    let t = translate(&format!(
        "hd=h1,system=a1,clients=3\n{FSD}fwd=f,fsd=fsd1,threads=2\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    let run = &t.plan.runs[0];
    assert_eq!(run.workloads[0].streams, 6);
    let hosts: Vec<(&str, Option<&str>)> = (run.hosts.iter())
        .map(|h| (h.name.as_str(), h.system.as_deref()))
        .collect();
    assert_eq!(
        hosts,
        [
            ("h1_cl0", Some("a1")),
            ("h1_cl1", Some("a1")),
            ("h1_cl2", Some("a1"))
        ]
    );
}

#[test]
fn an_fwd_bound_to_a_host_runs_there_alone() {
    let t = translate(&format!(
        "{TWO_HOSTS}fsd=fsd!host,anchor=/a/!host,files=2,size=8k\n\
         fwd=fwd!host,host=!host,fsd=fsd!host,threads=2\n\
         rd=r,fwd=fwd*,format=yes,elapsed=4\n"
    ));
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    for run in &t.plan.runs {
        let by_host: Vec<(&str, &[String])> = run
            .hosts
            .iter()
            .map(|h| (h.name.as_str(), h.targets.as_slice()))
            .collect();
        let (a, b) = (["fsdh1".to_string()], ["fsdh2".to_string()]);
        assert_eq!(by_host, [("h1", &a[..]), ("h2", &b[..])], "{}", run.name);
    }
    // The fwd's own threads on its one host (the format run has vdbench's 8).
    assert!(t.plan.runs[1].workloads.iter().all(|w| w.streams == 2));
}

#[test]
fn a_host_an_fwd_names_must_be_defined_and_a_tree_keeps_its_hosts() {
    let e = refusal(&format!(
        "{TWO_HOSTS}{FSD}fwd=f,fsd=fsd1,host=h9\nrd=r,fwd=f,elapsed=4\n"
    ));
    assert!(
        e.contains("t.parm:5") && e.contains("host=h9: no such hd="),
        "{e}"
    );
    // One rd runs fsd1 on h1, another on both: the second gets a target of its
    // own on the same tree, driven by both, so each host drives the workloads of
    // its own fwds and a target has one set of hosts for the whole file.
    let t = parse_str(
        "t.parm",
        &format!(
            "{TWO_HOSTS}{FSD}fwd=f1,fsd=fsd1,host=h1\nfwd=f2,fsd=fsd1\n\
             rd=r1,fwd=f1,elapsed=4\nrd=r2,fwd=f2,elapsed=4\n"
        ),
    )
    .unwrap();
    let targets: Vec<&str> = t.plan.targets.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(targets, ["fsd1", "fsd1@h1+h2"]);
    assert_eq!(
        t.plan.targets[0].uri, t.plan.targets[1].uri,
        "the same tree"
    );
    assert_eq!(t.plan.runs[0].workloads[0].target, "fsd1");
    assert_eq!(t.plan.runs[1].workloads[0].target, "fsd1@h1+h2");
    for r in &t.plan.runs {
        let by_host: Vec<(&str, Vec<&str>)> = (r.hosts.iter())
            .map(|h| {
                (
                    h.name.as_str(),
                    h.targets.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            by_host,
            [
                ("h1", vec!["fsd1", "fsd1@h1+h2"]),
                ("h2", vec!["fsd1@h1+h2"])
            ]
        );
    }
}

#[test]
fn an_operation_nothing_can_feed_again_stops_when_none_is_left() {
    use crate::plan::settings::declared::STOP_WHEN_NONE_LEFT;
    let stops = |fwds: &str| -> Vec<(String, bool)> {
        let t = translate(&format!("{FSD}{fwds}rd=r,fwd=f*,elapsed=4\n"));
        (t.plan.runs[0].workloads.iter())
            .map(|w| (w.name.clone(), w.settings.flag(&STOP_WHEN_NONE_LEFT)))
            .collect()
    };
    let s = |v: &[(&str, bool)]| -> Vec<(String, bool)> {
        v.iter().map(|(n, b)| (n.to_string(), *b)).collect()
    };
    // Alone, each runs out; beside its counterpart, it never does; reads,
    // writes and copies never stop (vdbench does not shut them down).
    assert_eq!(
        stops("fwd=fd,fsd=fsd1,operation=delete\nfwd=fr,fsd=fsd1,operation=read\n"),
        s(&[("fd", true), ("fr", false)])
    );
    assert_eq!(
        stops("fwd=fc,fsd=fsd1,operation=create\nfwd=fd,fsd=fsd1,operation=delete\n"),
        s(&[("fc", false), ("fd", false)])
    );
    assert_eq!(
        stops("fwd=fc,fsd=fsd1,operation=create\nfwd=fg,fsd=fsd1,operation=getattr\n"),
        s(&[("fc", true), ("fg", false)])
    );
    assert_eq!(
        stops("fwd=fm,fsd=fsd1,operation=mkdir\nfwd=fx,fsd=fsd1,operation=copy\n"),
        s(&[("fm", true), ("fx", false)])
    );
}

/// As vdbench builds its rd list (`RD_entry.buildNewRdListForFwd`): a format before
/// every combination of the loops (`format=yes`), before the first only
/// (`format=once`), or the formats alone (`format=only`).
#[test]
fn for_loops_make_one_run_per_combination_formatting_before_each() {
    let names = |format: &str| {
        let t = translate(&format!(
            "{FSD}fwd=f,fsd=fsd1,operation=read,xfersize=4k,threads=1\n\
             rd=r,fwd=f,format={format},elapsed=4,forxfersize=(4k-16k,d),forthreads=(1,3)\n"
        ));
        assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
        (t.plan.runs.iter())
            .map(|r| r.name.clone())
            .collect::<Vec<_>>()
    };
    let combos = [
        "xfersize=4k threads=1",
        "xfersize=4k threads=3",
        "xfersize=8k threads=1",
        "xfersize=8k threads=3",
        "xfersize=16k threads=1",
        "xfersize=16k threads=3",
    ];
    let each: Vec<String> = (combos.iter())
        .flat_map(|c| [format!("format_for_r {c}"), format!("r {c}")])
        .collect();
    assert_eq!(names("yes"), each);
    let mut once: Vec<String> = combos.iter().map(|c| format!("r {c}")).collect();
    once.insert(0, format!("format_for_r {}", combos[0]));
    assert_eq!(names("once"), once);
    let only: Vec<String> = combos.iter().map(|c| format!("format_for_r {c}")).collect();
    assert_eq!(names("(only)"), only);
    // vdbench refuses format=once on an rd without loops.
    let e = refusal(&format!(
        "{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,format=once,elapsed=4\n"
    ));
    assert!(e.contains("format=once") && e.contains("t.parm:"), "{e}");
    let t = translate(&format!(
        "{FSD}fwd=f,fsd=fsd1,operation=read,xfersize=4k,threads=1\n\
         rd=r,fwd=f,format=yes,elapsed=4,forxfersize=(4k-16k,d),forthreads=(1,3)\n"
    ));
    let w = &t.plan.runs[11].workloads[0];
    assert_eq!((w.bs.max_bytes(), w.streams), (16384, 3));
    // foroperations: one run per operation; forfwdrate: one per rate.
    let t = translate(&format!(
        "{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4,foroperations=(read,getattr),forfwdrate=(100,max)\n"
    ));
    let got: Vec<(String, String)> = (t.plan.runs.iter())
        .map(|r| (r.name.clone(), format!("{:?}", r.workloads[0].rate)))
        .collect();
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[0].0, "r operations=read fwdrate=100");
    assert!(got[0].1.contains("100"), "{got:?}");
    assert_eq!(got[3].0, "r operations=getattr fwdrate=max");
    assert_eq!(
        t.plan.runs[3].workloads[0].overrides.engine,
        Some(crate::plan::model::EngineKind::FileStat)
    );
}

/// `openflags=` as vdbench's FwgEntry takes it: the fsd's, replaced whole by an
/// fwd's, replaced by an rd's. `fsync` (vdbench fsyncs each file before it closes
/// it) is `fsync_each_file` on the writing workloads; an fwd's `o_direct` on a
/// buffered fsd opens the tree through a target of its own.
#[test]
fn openflags_come_from_the_fsd_the_fwd_or_the_rd() {
    use crate::plan::settings::declared::FSYNC_EACH_FILE;
    let fsyncs = |t: &Translated, run: usize, w: usize| {
        t.plan.runs[run].workloads[w]
            .settings
            .flag(&FSYNC_EACH_FILE)
    };
    let t = translate(&format!(
        "{FSD}fwd=w,fsd=fsd1,operation=write,openflags=fsync\n\
         fwd=r,fsd=fsd1,operation=read,openflags=o_direct\n\
         rd=rd1,fwd=(w,r),format=yes,elapsed=4,interval=1\n"
    ));
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    // The fsd has no openflags: its format run neither fsyncs nor bypasses the cache.
    assert!(!fsyncs(&t, 0, 0));
    assert_eq!(t.plan.runs[0].workloads[0].target, "fsd1");
    let own = &t.plan.runs[1].workloads;
    assert_eq!(
        (own[0].name.as_str(), own[0].target.as_str()),
        ("w", "fsd1")
    );
    assert!(fsyncs(&t, 1, 0) && !fsyncs(&t, 1, 1));
    assert_eq!(own[1].target, "fsd1.o_direct");
    let direct = |name: &str| {
        t.plan
            .targets
            .iter()
            .find(|x| x.name == name)
            .unwrap()
            .direct
    };
    assert_eq!(
        (direct("fsd1"), direct("fsd1.o_direct")),
        (Some(false), Some(true))
    );

    // On the fsd: every writing workload on the tree fsyncs, format included; an
    // rd's openflags replace them (here: neither fsync nor O_DIRECT).
    let t = translate(
        "fsd=fsd1,anchor=/a,files=8,size=1m,openflags=(o_direct,fsync)\n\
         fwd=w,fsd=fsd1,operation=write\nrd=rd1,fwd=w,format=yes,elapsed=4\n\
         rd=rd2,fwd=w,elapsed=4,openflags=o_rdonly\n",
    );
    assert!(fsyncs(&t, 0, 0) && fsyncs(&t, 1, 0) && !fsyncs(&t, 2, 0));
    assert_eq!(t.plan.targets[0].direct, Some(true));
    assert_eq!(t.plan.runs[2].workloads[0].target, "fsd1.buffered");
    assert_eq!(dropped(&t), ["openflags=o_rdonly"]);

    // On an NFS tree libnfs has no descriptor to fsync: listed, not set; O_DIRECT
    // there is refused wherever it is given.
    let t = translate(
        "fsd=fsd1,anchor=nfs://127.0.0.1/e/t,size=4k\n\
         fwd=w,fsd=fsd1,operation=write,openflags=fsync\nrd=rd1,fwd=w,elapsed=4\n",
    );
    assert!(!fsyncs(&t, 0, 0));
    assert!(dropped(&t)[0].starts_with("openflags=fsync — on an nfs:// or smb:// anchor"));
    let e = refusal(
        "fsd=fsd1,anchor=nfs://127.0.0.1/e/t,size=4k\n\
         fwd=r,fsd=fsd1,operation=read,openflags=o_direct\nrd=rd1,fwd=r,elapsed=4\n",
    );
    assert!(
        e.contains("t.parm:2") && e.contains("nothing to bypass"),
        "{e}"
    );
}

/// `format=` as vdbench's FormatFlags reads it: any `no` wins; `clean` deletes the
/// trees and implies `only`; words it does not know are listed.
#[test]
fn format_words_as_vdbench_reads_them() {
    let runs = |format: &str| {
        let t = translate(&format!(
            "{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4,format={format}\n"
        ));
        let names: Vec<String> = t.plan.runs.iter().map(|r| r.name.clone()).collect();
        (names.join(" "), dropped(&t).len())
    };
    assert_eq!(runs("(yes,no)"), ("r".into(), 0));
    assert_eq!(runs("(restart,only)"), ("format_for_r".into(), 0));
    assert_eq!(runs("yes"), ("format_for_r r".into(), 0));
    assert_eq!(
        runs("(clean,only)"),
        ("clean_for_r clean_dirs_for_r".into(), 0)
    );
    assert_eq!(
        runs("(yes,clean)"),
        ("clean_for_r clean_dirs_for_r".into(), 0)
    );
    // `complete` beside `no` says the files are there (ioscope finds them).
    assert_eq!(runs("(no,complete)"), ("r".into(), 0));
    // `directories`, by any prefix, is listed with why; the rd still runs.
    for dirs in ["directories", "dir", "(d,only)"] {
        let t = translate(&format!(
            "{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4,format={dirs}\n"
        ));
        let d = dropped(&t);
        assert!(
            d.len() == 1 && d[0].contains("directories alone"),
            "{dirs}: {d:?}"
        );
    }
    // `complete` without `no`: vdbench refuses it.
    let e = refusal(&format!(
        "{FSD}fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4,format=complete\n"
    ));
    assert!(
        e.contains("t.parm:3") && e.contains("mutually exclusive"),
        "{e}"
    );
}

/// `format=(only,limited)`: the format ends at the rd's elapsed or maxdata, if it
/// has not written every file before; `limited` without `only` is refused, as
/// vdbench refuses it.
#[test]
fn format_limited_bounds_the_format_by_elapsed_and_maxdata() {
    let text = "fsd=fsd1,anchor=/a,depth=1,width=2,files=4,size=1m\n\
                fwd=w,fsd=fsd1,operation=write\n\
                rd=r,fwd=w,format=(only,limited),elapsed=30,maxdata=200m\n";
    let t = translate(text);
    assert_eq!(t.plan.runs.len(), 1);
    let r = &t.plan.runs[0];
    assert_eq!(r.name, "format_for_r");
    assert_eq!((r.duration_ns, r.passes), (Some(30_000_000_000), Some(1)));
    use crate::plan::settings::{declared::STOP_AFTER_BYTES, Value};
    assert_eq!(r.settings.get(&STOP_AFTER_BYTES), Value::Bytes(200 << 20));
    assert!(dropped(&t).is_empty(), "{:?}", dropped(&t));
    let e = crate::plan::compat::vdbench::parse_text(
        "t.parm",
        &text.replace("(only,limited)", "(yes,limited)"),
        std::path::Path::new("."),
        &[],
        None,
    )
    .err()
    .unwrap();
    assert!(e.msg.contains("needs format=(only,limited)"), "{}", e.msg);
}

/// `distribution=all`: files in every directory (vdbench's default, `bottom`, in
/// the last level's only); another word is refused, as vdbench refuses it.
#[test]
fn distribution_all_puts_files_in_every_directory() {
    let t = translate(
        "fsd=fsd1,anchor=/a,depth=2,width=3,files=2,size=4k,distribution=all\n\
         fwd=f,fsd=fsd1\nrd=r,fwd=f,elapsed=4\n",
    );
    assert!(
        t.plan.targets[0].uri.contains("&dist=all"),
        "{}",
        t.plan.targets[0].uri
    );
    assert!(t.unsupported.is_empty());
    let e = refusal("fsd=fsd1,anchor=/a,size=4k,distribution=top\nfwd=f,fsd=fsd1\nrd=r,fwd=f\n");
    assert!(
        e.contains("t.parm:1") && e.contains("distribution=top"),
        "{e}"
    );
}

/// `shared=yes`: on one host it changes nothing; with an fwd per host each host's
/// workload uses its one file in n (`share=J/N`); an fwd on several hosts becomes
/// one workload per host, each on its host's share (vdbench's slaves each run it on
/// their files), its threads on each and its skew shared among them.
#[test]
fn shared_gives_each_host_its_share() {
    let text = |hosts: &str, fwd2: &str| {
        format!(
            "{hosts}fsd=fsd1,anchor=/a,files=8,size=1m,shared=yes\n\
             fwd=fwd1,fsd=fsd1,host=hd1\nfwd=fwd2,fsd=fsd1,host={fwd2}\n\
             rd=r,fwd=fwd*,elapsed=4\n"
        )
    };
    let one = translate(&text("hd=hd1,system=a\n", "hd*"));
    assert!(one.unsupported.is_empty(), "{:?}", dropped(&one));
    assert_eq!(one.plan.runs[0].workloads[0].target, "fsd1");
    let per_host = translate(&text("hd=hd1,system=a\nhd=hd2,system=b\n", "hd2"));
    assert!(per_host.unsupported.is_empty(), "{:?}", dropped(&per_host));
    let targets: Vec<&str> = (per_host.plan.runs[0].workloads.iter())
        .map(|w| w.target.as_str())
        .collect();
    assert_eq!(targets, ["fsd1.share1of2", "fsd1.share2of2"]);
    assert!(per_host.plan.targets[1].uri.contains("&share=1/2"));
    let both = translate(&text("hd=hd1,system=a\nhd=hd2,system=b\n", "hd*"));
    assert!(both.unsupported.is_empty(), "{:?}", dropped(&both));
    let w: Vec<(&str, &str, u32)> = (both.plan.runs[0].workloads.iter())
        .map(|w| (w.name.as_str(), w.target.as_str(), w.streams))
        .collect();
    assert_eq!(
        w,
        [
            ("fwd1", "fsd1.share1of2", 1),
            ("fwd2@hd1", "fsd1.share1of2", 1),
            ("fwd2@hd2", "fsd1.share2of2", 1)
        ]
    );
}

/// vdbench reads maxdata up to 100 as a multiple of the sds' size: a file-system rd
/// has none, so both 99 and 100 are refused (where they are written); 101 is bytes.
#[test]
fn maxdata_up_to_100_is_refused_on_a_file_system_rd() {
    for v in ["99", "100"] {
        let text = format!("fsd=fsd1,anchor=/a,depth=1,width=1,files=2,size=4k\nfwd=f,fsd=fsd1\nrd=r,fwd=f,maxdata={v}\n");
        let e = refusal(&text);
        assert!(
            e.contains("t.parm:3") && e.contains("up to 100"),
            "{v}: {e}"
        );
    }
    let t = translate(
        "fsd=fsd1,anchor=/a,depth=1,width=1,files=2,size=4k\nfwd=f,fsd=fsd1\n\
         rd=r,fwd=f,maxdata=101,maxdatawritten=1m\n",
    );
    use crate::plan::settings::declared::{STOP_AFTER_BYTES, STOP_AFTER_WRITE_BYTES};
    let run = t.plan.runs.last().unwrap();
    assert_eq!((run.settings).bytes(&STOP_AFTER_BYTES), 101);
    assert_eq!((run.settings).bytes(&STOP_AFTER_WRITE_BYTES), 1 << 20);
}

// vdbench's own spellings (FwdEntry): `xfersizes=` (the long form `xfersize=` is
// a prefix of), `readpct=` for `rdpct=`; an rd's `fwd=(f1-f2)` is a range of names.
#[test]
fn fwd_keys_and_name_ranges_as_vdbench_spells_them() {
    let t = translate(&format!(
        "{FSD}fwd=f1,fsd=fsd1,xfersizes=(4k,50,8k,50),readpct=80,threads=2\n\
         fwd=f2,fsd=fsd1,xfersizes=16k,operation=read\n\
         rd=r,fwd=(f1-f2),elapsed=4\n"
    ));
    assert!(t.unsupported.is_empty(), "{:?}", dropped(&t));
    let w = &t.plan.runs[0].workloads;
    assert_eq!(w.len(), 2, "both fwds of the range");
    assert_eq!((w[0].bs.max_bytes(), w[0].read_pct), (8192, 80));
    assert_eq!(w[1].bs.max_bytes(), 16384);
}
