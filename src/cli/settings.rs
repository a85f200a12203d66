//! The command-line flags of the declared settings ([`crate::plan::settings`]): each
//! declaration that names a flag becomes one, with its help text, `--help` heading
//! and value parser taken from the declaration, so a new setting needs no code here.
//! Flags take a value (`--invalidate false`), as `--direct` does; a switch
//! (`--atomic-writes`) may be given alone and takes a value only after `=`, so a flag
//! before the job file never swallows its path. Workload settings
//! ([`SettingFlags`]) are laid over every workload; command settings
//! ([`CommandFlags`], flattened into the output options) go to the command as a whole.

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use crate::plan::settings::{self, CommandSettings, Decl, Kind, RunSettings, Scope};
use crate::plan::settings::{ScopeMark, SettingMap, Value, WorkloadSettings};

/// Which declarations a set of flags is made from.
pub trait OfScope {
    const SCOPE: Scope;
    /// Only these keys of the scope (`None`: all of them).
    const KEYS: Option<&'static [&'static str]> = None;
}

/// Flags of command settings, which make a command's [`CommandSettings`].
pub trait OfCommand: OfScope {}

/// The workload settings' flags.
#[derive(Debug, Clone, Default)]
pub struct Workloads;
impl OfScope for Workloads {
    const SCOPE: Scope = Scope::Workload;
}

/// The command settings' flags.
#[derive(Debug, Clone, Default)]
pub struct Commands;
impl OfScope for Commands {
    const SCOPE: Scope = Scope::Command;
}
impl OfCommand for Commands {}

/// The command settings `ioscope net serve|run` take: `--metrics` (the status line
/// and the per-rank endpoints mean nothing there).
#[derive(Debug, Clone, Default)]
pub struct NetCommands;
impl OfScope for NetCommands {
    const SCOPE: Scope = Scope::Command;
    const KEYS: Option<&'static [&'static str]> = Some(&["metrics"]);
}
impl OfCommand for NetCommands {}

/// The declared settings of one scope given on the command line.
#[derive(Debug, Clone, Default)]
pub struct Flags<S> {
    given: Vec<(&'static Decl, Value)>,
    scope: std::marker::PhantomData<S>,
}

/// The workload settings given on the command line.
pub type SettingFlags = Flags<Workloads>;
/// The command settings given on the command line.
pub type CommandFlags = Flags<Commands>;
/// The command settings given to `ioscope net serve|run`.
pub type NetCommandFlags = Flags<NetCommands>;

impl<S: OfCommand> Flags<S> {
    /// The command's settings: the flags given, defaults for the rest.
    pub fn settings(&self) -> CommandSettings {
        let mut c = CommandSettings::default();
        for (d, v) in &self.given {
            c.set(d, *v);
        }
        c
    }
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

/// The flags of `S`'s declarations; the workload flags bring the run settings'
/// with them (both are laid over a plan, [`SettingFlags::apply_run`]).
fn flagged<S: OfScope>() -> impl Iterator<Item = (&'static Decl, &'static str)> {
    let runs = (S::SCOPE == Scope::Workload).then(|| settings::of_scope(Scope::Run));
    settings::of_scope(S::SCOPE)
        .chain(runs.into_iter().flatten())
        .filter(|d| S::KEYS.map_or(true, |keys| keys.contains(&d.key)))
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
        Kind::Percent => "PCT",
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

impl<S: OfScope + Clone + Default + std::fmt::Debug> Args for Flags<S> {
    fn augment_args(cmd: Command) -> Command {
        flagged::<S>().fold(cmd, |cmd, (d, f)| cmd.arg(arg(d, f)))
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<S: OfScope + Default> FromArgMatches for Flags<S> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = flagged::<S>()
            .filter_map(|(d, _)| {
                let v = m.try_get_one::<Value>(&id(d)).ok().flatten()?;
                Some((d, *v))
            })
            .collect();
        Ok(Flags {
            given,
            scope: Default::default(),
        })
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}
