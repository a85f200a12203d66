//! Shell completion scripts and man pages, generated from the same clap definitions
//! the parser uses, so they cannot drift from the flags. Both are written to stdout
//! through [`app::stdout`](crate::app::stdout) (a closed pipe ends quietly), or, for
//! `man --dir`, as one page per subcommand.

use super::Cli;
use crate::app::{stdout, AppError};
use clap::CommandFactory;
use std::path::Path;

/// The long help of subcommand `name` (`ioscope vdbench --help`: the foreign
/// front-ends take their arguments raw, so clap does not see `--help` there).
pub fn subcommand_help(name: &str) -> Result<i32, AppError> {
    let mut cmd = Cli::command();
    let text = match cmd.find_subcommand_mut(name) {
        Some(sub) => sub
            .clone()
            .bin_name(format!("ioscope {name}"))
            .render_long_help()
            .to_string(),
        None => format!("no subcommand '{name}'\n"),
    };
    stdout::print(&text)?;
    Ok(crate::app::exit::OK)
}

/// The completion script for `shell`.
pub fn completion_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ioscope", &mut buf);
    buf
}

/// `ioscope completions SHELL`.
pub fn completions(shell: clap_complete::Shell) -> Result<i32, AppError> {
    stdout::print_bytes(&completion_script(shell))?;
    Ok(crate::app::exit::OK)
}

/// The roff text of one man page.
fn render(cmd: clap::Command) -> Vec<u8> {
    let mut buf = Vec::new();
    // Rendering into a Vec cannot fail.
    let _ = clap_mangen::Man::new(cmd).render(&mut buf);
    buf
}

/// The man page of ioscope itself (ioscope.1).
pub fn man_page() -> Vec<u8> {
    render(Cli::command())
}

/// `ioscope man [--dir DIR]`.
pub fn man(dir: Option<&Path>) -> Result<i32, AppError> {
    let Some(dir) = dir else {
        stdout::print_bytes(&man_page())?;
        return Ok(crate::app::exit::OK);
    };
    let write = |name: &str, page: Vec<u8>| {
        let path = dir.join(name);
        std::fs::write(&path, page).map_err(|source| AppError::Write { path, source })
    };
    if !dir.is_dir() {
        return Err(crate::app::FlagError::new(
            "--dir",
            dir.display().to_string(),
            "not a directory",
        )
        .into());
    }
    let mut root = Cli::command();
    root.build();
    write("ioscope.1", render(root.clone()))?;
    for sub in root.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("ioscope-{}", sub.get_name());
        let page = sub
            .clone()
            .name(name.clone())
            .bin_name(name.replacen('-', " ", 1))
            .version(env!("CARGO_PKG_VERSION"));
        write(&format!("{name}.1"), render(page))?;
    }
    Ok(crate::app::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn man_page_is_roff_and_names_the_subcommands() {
        let page = String::from_utf8(man_page()).unwrap();
        // clap_mangen opens with the definition of the apostrophe string (.ie/.el),
        // then the title.
        let first = page
            .lines()
            .find(|l| !l.starts_with(".ie") && !l.starts_with(".el"))
            .unwrap();
        assert!(first.starts_with(".TH ioscope 1"), "{first}");
        assert!(page.contains("run"));
    }

    #[test]
    fn every_shell_gets_a_script() {
        use clap_complete::Shell;
        for (shell, bs_flag) in [
            (Shell::Bash, "--bs"),
            (Shell::Zsh, "--bs"),
            (Shell::Fish, "-l bs"),
        ] {
            let s = String::from_utf8(completion_script(shell)).unwrap();
            assert!(s.contains("ioscope"), "{shell:?}");
            assert!(s.contains(bs_flag), "{shell:?}: flags of subcommands");
        }
    }
}
