//! `ioscope completions SHELL` and `ioscope man`: generated from the parser's own
//! definitions, accepted by the shells and by man.

use super::*;

fn bash(script: &str) -> Output {
    Command::new("bash")
        .args(["-c", script])
        .output()
        .expect("run bash")
}

#[test]
fn bash_completion_parses_and_registers() {
    let d = tempdir();
    let path = d.path().join("ioscope.bash");
    let o = run(&["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(&path, &o.stdout).unwrap();
    let p = path.to_str().unwrap();
    let check = bash(&format!("bash -n '{p}'"));
    assert!(check.status.success(), "bash -n: {}", stderr(&check));
    let reg = bash(&format!("source '{p}' && complete -p ioscope"));
    assert!(reg.status.success(), "{}", stderr(&reg));
    assert!(
        stdout(&reg).contains("-F _ioscope ioscope"),
        "{}",
        stdout(&reg)
    );
    // The script completes subcommand flags, e.g. run's --bs.
    let words = bash(&format!(
        "source '{p}'; COMP_WORDS=(ioscope run --b); COMP_CWORD=2; COMP_LINE='ioscope run --b'; \
         COMP_POINT=${{#COMP_LINE}}; _ioscope ioscope --b run; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    ));
    assert!(
        stdout(&words).lines().any(|l| l == "--bs"),
        "{}",
        stdout(&words)
    );
}

#[test]
fn zsh_and_fish_scripts_are_generated() {
    for (shell, needle) in [("zsh", "#compdef ioscope"), ("fish", "complete -c ioscope")] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains(needle), "{shell}");
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is bad input");
}

/// The first macro after clap_mangen's apostrophe-string preamble (.ie/.el).
fn title(page: &str) -> &str {
    page.lines()
        .find(|l| !l.starts_with(".ie") && !l.starts_with(".el"))
        .unwrap_or("")
}

#[test]
fn man_page_to_stdout_and_per_subcommand() {
    let o = run(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(
        title(&page).starts_with(".TH ioscope 1"),
        "{}",
        title(&page)
    );
    assert!(page.contains("run"), "the page lists the subcommands");

    let d = tempdir();
    let o = run(&["man", "--dir", d.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run_page = std::fs::read_to_string(d.path().join("ioscope-run.1")).unwrap();
    assert!(title(&run_page).starts_with(".TH ioscope-run 1"));
    assert!(run_page.contains("bs"), "run's flags are documented");
    assert!(d.path().join("ioscope.1").exists());
    assert!(!d.path().join("ioscope-help.1").exists());

    // groff, where installed, renders the page without errors.
    if let Ok(g) = Command::new("groff")
        .args(["-man", "-Tutf8", "-z"])
        .arg(d.path().join("ioscope-run.1"))
        .output()
    {
        assert!(g.status.success(), "{}", stderr(&g));
    }

    let missing = d.path().join("no/such/dir");
    let o = run(&["man", "--dir", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--dir"), "{}", stderr(&o));
}
