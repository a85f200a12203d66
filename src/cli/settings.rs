//! The command-line flags of the declared settings ([`crate::plan::settings`]): each
//! declaration that names a flag becomes one, with its help text, `--help` heading
//! and value parser taken from the declaration, so a new setting needs no code here.
//! Flags take a value (`--invalidate false`), as `--direct` does; a switch
//! (`--atomic-writes`) may be given alone and takes a value only after `=`, so a flag
//! before the job file never swallows its path.

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use crate::plan::settings::{self, Decl, RunSettings, Scope, ScopeMark, SettingMap, Value};
use crate::plan::settings::{Kind, WorkloadSettings};

/// The declared settings given on the command line.
#[derive(Debug, Clone, Default)]
pub struct SettingFlags {
    given: Vec<(&'static Decl, Value)>,
}

impl SettingFlags {
    /// Lays the flags given over a workload's settings (a flag wins over a job file).
    pub fn apply(&self, w: &mut WorkloadSettings) {
        self.apply_scope(w);
    }

    /// Lays the flags given over a run's settings (a flag wins over a job file).
    pub fn apply_run(&self, r: &mut RunSettings) {
        self.apply_scope(r);
    }

    fn apply_scope<S: ScopeMark>(&self, m: &mut SettingMap<S>) {
        for (d, v) in self.given.iter().filter(|(d, _)| d.scope == S::SCOPE) {
            m.set(d, *v);
        }
    }

    /// Gives a setting as if its flag had been (a subcommand's positional
    /// argument that means a setting, such as `replay TRACE`).
    pub fn give(&mut self, d: &'static Decl, v: Value) {
        self.given.retain(|(g, _)| !std::ptr::eq(*g, d));
        self.given.push((d, v));
    }
}

fn id(d: &Decl) -> String {
    format!("setting-{}", d.key)
}

fn flagged() -> impl Iterator<Item = (&'static Decl, &'static str)> {
    settings::of_scope(Scope::Workload)
        .chain(settings::of_scope(Scope::Run))
        .filter_map(|d| d.flag.map(|f| (d, f)))
}

/// The flag's help: the doc, its words when it is a choice, and its default.
fn help(d: &Decl) -> String {
    let words = match d.kind {
        Kind::Choice(words) => format!(" [{}]", words.join(", ")),
        _ => String::new(),
    };
    match d.default.text() {
        t if t.is_empty() => format!("{}{words}", d.doc),
        t => format!("{}{words} [default: {t}]", d.doc),
    }
}

fn arg(d: &'static Decl, flag: &'static str) -> Arg {
    let value_name = match d.kind {
        Kind::Flag => "BOOL",
        Kind::Count => "N",
        Kind::Bytes => "SIZE",
        Kind::Nanos => "DUR",
        Kind::Ratio => "X",
        Kind::Text => "TEXT",
        Kind::Choice(_) => "WORD",
    };
    let a = Arg::new(id(d))
        .long(flag)
        .value_name(value_name)
        .help(help(d))
        .help_heading(d.heading)
        .value_parser(move |s: &str| d.parse_text(s));
    match d.switch {
        // Given alone it means true; a value needs `=`, so it never takes the job
        // file's path.
        true => a
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("true"),
        false => a,
    }
}

impl Args for SettingFlags {
    fn augment_args(cmd: Command) -> Command {
        flagged().fold(cmd, |cmd, (d, f)| cmd.arg(arg(d, f)))
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for SettingFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = flagged()
            .filter_map(|(d, _)| {
                let v = m.try_get_one::<Value>(&id(d)).ok().flatten()?;
                Some((d, *v))
            })
            .collect();
        Ok(SettingFlags { given })
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}
