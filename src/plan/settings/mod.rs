//! The settings registry: each setting declared once ([`declared`]) with its name,
//! value kind and unit, default, scope, one-line doc, native job-file key, command-line
//! flag and result field. The job-file reader and writer, the `--help` text of the
//! flags, the fio reader and writer (through fio's option table), the result echo and
//! the settings table in docs/job-file.md all read the declaration, so a new setting is
//! one declaration plus the code that acts on it.
//!
//! The trade-off: a declared setting's value is held by key in a small map
//! ([`WorkloadSettings`]) and read with a typed getter, not as a struct field. The
//! run core reads a setting once, at set-up, so the lookup never sits on the I/O path.
//! Settings older than the registry keep their model fields until they are moved.
//!
//! A setting applies to one workload or to a whole run ([`Scope`]); the two kinds of
//! map are one type over a scope marker ([`WorkloadSettings`], [`RunSettings`]), so a
//! map can only hold, echo and write back settings of its own scope.

pub mod declared;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::units;

/// What kind of value a setting takes, and so how it is read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// true or false (`1`/`0`, `yes`/`no`, `on`/`off` in text).
    Flag,
    /// A whole number of things.
    Count,
    /// A byte size (`4k`, `1m`, plain bytes).
    Bytes,
    /// A duration (`250ms`, `30s`, a bare number of seconds).
    Nanos,
    /// A number with a fraction (a speed factor).
    Ratio,
    /// A percentage, 0 to 100, fraction allowed; held as a [`Value::Ratio`].
    Percent,
    /// Free text: a path, a name (`""` = none).
    Text,
    /// One of a fixed list of words; the first is the default's usual place.
    Choice(&'static [&'static str]),
}

impl Kind {
    fn type_doc(self) -> String {
        match self {
            Kind::Flag => "boolean".into(),
            Kind::Count => "integer".into(),
            Kind::Bytes => "size".into(),
            Kind::Nanos => "duration".into(),
            Kind::Ratio => "number".into(),
            Kind::Percent => "percentage".into(),
            Kind::Text => "string".into(),
            Kind::Choice(words) => format!("one of {}", words.join(", ")),
        }
    }

    /// What a job file must give, for type errors.
    fn wanted(self) -> String {
        match self {
            Kind::Flag => "true or false".into(),
            Kind::Count => "an integer".into(),
            Kind::Bytes => "a size such as \"4k\" or a number of bytes".into(),
            Kind::Nanos => "a duration such as \"30s\" or a number of seconds".into(),
            Kind::Ratio => "a number such as 1.5".into(),
            Kind::Percent => "a percentage from 0 to 100".into(),
            Kind::Text => "a string".into(),
            Kind::Choice(words) => format!("one of \"{}\"", words.join("\", \"")),
        }
    }
}

/// Where a setting applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One `[[workload]]` (a fio job, a vdbench wd).
    Workload,
    /// The whole command (how it reports while it runs), from the command line only:
    /// no job-file key, not echoed in a workload; held in [`CommandSettings`].
    Command,
    /// A whole run: `[defaults]` and `[[run]]` in a job file, held by the run spec.
    Run,
}

impl Scope {
    /// The scope's name in docs markers.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Workload => "workload",
            Scope::Run => "run",
            Scope::Command => "command",
        }
    }
}

/// The scope of a settings map, as a type.
pub trait ScopeMark: std::fmt::Debug + Clone + Default + PartialEq {
    const SCOPE: Scope;
}

/// Marks a map of [`Scope::Workload`] settings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OfWorkload;
impl ScopeMark for OfWorkload {
    const SCOPE: Scope = Scope::Workload;
}

/// Marks a map of [`Scope::Run`] settings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OfRun;
impl ScopeMark for OfRun {
    const SCOPE: Scope = Scope::Run;
}

/// Marks a map of [`Scope::Command`] settings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OfCommand;
impl ScopeMark for OfCommand {
    const SCOPE: Scope = Scope::Command;
}

/// A setting's value, in the unit its kind names. Text is interned for the life of
/// the process ([`intern`]) so that a value stays `Copy`: a command reads a handful
/// of them once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Flag(bool),
    Count(u64),
    Bytes(u64),
    Nanos(u64),
    Ratio(f64),
    Text(&'static str),
    /// One of its kind's words (the declaration's own `&'static str`).
    Choice(&'static str),
}

/// Text held for the rest of the process: a setting's text is read once per command,
/// and the same text is held once.
pub fn intern(text: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static HELD: OnceLock<Mutex<std::collections::BTreeSet<&'static str>>> = OnceLock::new();
    let mut held = HELD
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(t) = held.get(text) {
        return t;
    }
    let t: &'static str = Box::leak(text.to_owned().into_boxed_str());
    held.insert(t);
    t
}

impl Value {
    /// Whether the value is of `kind` (a choice: one of its words).
    fn is_of(self, kind: Kind) -> bool {
        match (self, kind) {
            (Value::Flag(_), Kind::Flag)
            | (Value::Count(_), Kind::Count)
            | (Value::Bytes(_), Kind::Bytes)
            | (Value::Nanos(_), Kind::Nanos)
            | (Value::Ratio(_), Kind::Ratio | Kind::Percent)
            | (Value::Text(_), Kind::Text) => true,
            (Value::Choice(w), Kind::Choice(words)) => words.contains(&w),
            _ => false,
        }
    }

    /// The value as a job file writes it (`true`, `8`, `"4k"`, `"250ms"`).
    pub fn to_toml(self) -> toml::Value {
        match self {
            Value::Flag(b) => toml::Value::Boolean(b),
            Value::Count(n) => toml::Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)),
            Value::Bytes(b) => toml::Value::String(units::format_size(b)),
            Value::Nanos(ns) => toml::Value::String(units::format_duration_ns(ns)),
            Value::Ratio(x) => toml::Value::Float(x),
            Value::Text(t) | Value::Choice(t) => toml::Value::String(t.to_string()),
        }
    }

    /// The value as fio reads it (`1`/`0`, bytes, microseconds with their unit).
    pub fn to_fio(self) -> String {
        match self {
            Value::Flag(b) => u8::from(b).to_string(),
            Value::Count(n) | Value::Bytes(n) => n.to_string(),
            Value::Nanos(ns) => format!("{}us", ns / 1000),
            Value::Ratio(x) => x.to_string(),
            Value::Text(t) | Value::Choice(t) => t.to_string(),
        }
    }

    /// The value as the result's JSON holds it (the unit is in the field's name).
    pub fn to_json(self) -> serde_json::Value {
        match self {
            Value::Flag(b) => serde_json::Value::Bool(b),
            Value::Count(n) | Value::Bytes(n) | Value::Nanos(n) => n.into(),
            Value::Ratio(x) => x.into(),
            Value::Text(t) | Value::Choice(t) => t.into(),
        }
    }

    /// The value of `kind` that [`Value::to_json`] wrote.
    pub fn from_json(kind: Kind, json: &serde_json::Value) -> Option<Value> {
        Some(match kind {
            Kind::Flag => Value::Flag(json.as_bool()?),
            Kind::Count => Value::Count(json.as_u64()?),
            Kind::Bytes => Value::Bytes(json.as_u64()?),
            Kind::Nanos => Value::Nanos(json.as_u64()?),
            Kind::Ratio | Kind::Percent => Value::Ratio(json.as_f64()?),
            Kind::Text => Value::Text(intern(json.as_str()?)),
            Kind::Choice(words) => Value::Choice(choice(words, json.as_str()?)?),
        })
    }

    /// The value as text in the unit people write (`true`, `4k`, `250ms`).
    pub fn text(self) -> String {
        match self {
            Value::Flag(b) => b.to_string(),
            Value::Count(n) => n.to_string(),
            Value::Bytes(b) => units::format_size(b),
            Value::Nanos(ns) => units::format_duration_ns(ns),
            Value::Ratio(x) => x.to_string(),
            Value::Text(t) | Value::Choice(t) => t.to_string(),
        }
    }

    /// A text or choice value's words (`""` for any other kind).
    pub fn as_str(self) -> &'static str {
        match self {
            Value::Text(t) | Value::Choice(t) => t,
            _ => "",
        }
    }
}

/// The word of `words` that `text` names (ASCII case aside).
fn choice(words: &'static [&'static str], text: &str) -> Option<&'static str> {
    words.iter().copied().find(|w| w.eq_ignore_ascii_case(text))
}

/// One setting, declared once.
#[derive(Debug)]
pub struct Decl {
    /// The native job-file key, and the setting's name everywhere.
    pub key: &'static str,
    pub kind: Kind,
    pub scope: Scope,
    pub default: Value,
    /// One line: what it does, for `--help`, the docs table and error messages.
    pub doc: &'static str,
    /// The long command-line flag (`--invalidate`), where it has one.
    pub flag: Option<&'static str>,
    /// The `--help` heading the flag is listed under.
    pub heading: &'static str,
    /// The field that carries it in the result's workload echo (units in the name).
    pub echo: &'static str,
    /// A flag setting whose command-line flag may be given alone to mean true
    /// (`--atomic-writes`; `--atomic-writes=false` also works).
    pub switch: bool,
}

impl Decl {
    /// Reads the setting from text (a command line, a foreign format), in the units
    /// people write.
    pub fn parse_text(&self, text: &str) -> Result<Value, String> {
        let t = text.trim();
        let v = match self.kind {
            Kind::Flag => Value::Flag(match t.to_ascii_lowercase().as_str() {
                "" | "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => return Err(format!("'{t}' is not true or false (or 1 or 0)")),
            }),
            Kind::Count => Value::Count(units::parse_count(t).map_err(|e| e.to_string())?),
            Kind::Bytes => {
                Value::Bytes(units::parse_size_allow_zero(t).map_err(|e| e.to_string())?)
            }
            Kind::Nanos => {
                Value::Nanos(units::parse_duration_ns_allow_zero(t).map_err(|e| e.to_string())?)
            }
            Kind::Ratio => match t.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => Value::Ratio(x),
                _ => return Err(format!("'{t}' is not a number greater than 0")),
            },
            Kind::Percent => match t.trim_end_matches('%').trim().parse::<f64>() {
                Ok(x) if (0.0..=100.0).contains(&x) => Value::Ratio(x),
                _ => return Err(format!("'{t}' is not a percentage from 0 to 100")),
            },
            Kind::Text => Value::Text(intern(t)),
            Kind::Choice(words) => Value::Choice(
                choice(words, t).ok_or_else(|| format!("'{t}' is not {}", self.kind.wanted()))?,
            ),
        };
        Ok(v)
    }

    /// Reads the setting from a job file's value; `Err` says what was expected.
    pub fn parse_input(&self, input: Input<'_>) -> Result<Value, String> {
        match (self.kind, input) {
            (Kind::Flag, Input::Bool(b)) => Ok(Value::Flag(b)),
            (Kind::Count, Input::Int(i)) => match u64::try_from(i) {
                Ok(0) => Err("must be at least 1, found 0".into()),
                Ok(n) => Ok(Value::Count(n)),
                Err(_) => Err(format!("must not be negative, found {i}")),
            },
            (Kind::Bytes | Kind::Nanos, Input::Int(i)) if i >= 0 => self.parse_text(&i.to_string()),
            (Kind::Bytes | Kind::Nanos | Kind::Text, Input::Str(s)) => self.parse_text(s),
            (Kind::Choice(_), Input::Str(s)) => self
                .parse_text(s)
                .map_err(|_| format!("must be {}, found {}", self.kind.wanted(), input.found())),
            (Kind::Ratio | Kind::Percent, Input::Int(i)) => self.parse_text(&i.to_string()),
            (Kind::Ratio | Kind::Percent, Input::Float(x)) => self.parse_text(&x.to_string()),
            (kind, other) => Err(format!(
                "must be {}, found {}",
                kind.wanted(),
                other.found()
            )),
        }
    }
}

/// A job-file value handed to [`Decl::parse_input`].
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    Bool(bool),
    Int(i64),
    Str(&'a str),
    Float(f64),
    /// Anything else, by the name of its type ("a table", "a float").
    Other(&'static str),
}

impl Input<'_> {
    fn found(self) -> String {
        match self {
            Input::Bool(b) => format!("a boolean {b}"),
            Input::Int(i) => format!("an integer {i}"),
            Input::Str(s) => format!("a string {s:?}"),
            Input::Float(x) => format!("a float {x}"),
            Input::Other(what) => what.to_string(),
        }
    }
}

/// Every declared setting of `scope`.
pub fn of_scope(scope: Scope) -> impl Iterator<Item = &'static Decl> {
    declared::ALL
        .iter()
        .copied()
        .filter(move |d| d.scope == scope)
}

/// The declaration whose job-file key is `key`.
pub fn lookup(key: &str) -> Option<&'static Decl> {
    declared::ALL.iter().copied().find(|d| d.key == key)
}

/// `fixed` followed by the keys of `scope`'s settings: what a job-file table accepts.
pub fn keys_with(fixed: &[&'static str], scope: Scope) -> Vec<&'static str> {
    let mut keys = fixed.to_vec();
    keys.extend(of_scope(scope).map(|d| d.key));
    keys
}

/// A workload's or a run's declared settings: the values given (from a job file, a
/// command line or a foreign format); every other setting of the scope has its
/// declared default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingMap<S: ScopeMark> {
    given: BTreeMap<&'static str, Value>,
    scope: std::marker::PhantomData<S>,
}

/// A workload's declared settings.
pub type WorkloadSettings = SettingMap<OfWorkload>;
/// A run's declared settings.
pub type RunSettings = SettingMap<OfRun>;

impl<S: ScopeMark> SettingMap<S> {
    /// The setting's value: as given, or its default.
    pub fn get(&self, d: &Decl) -> Value {
        self.given.get(d.key).copied().unwrap_or(d.default)
    }

    /// A flag setting's value (false for a setting of another kind).
    pub fn flag(&self, d: &Decl) -> bool {
        matches!(self.get(d), Value::Flag(true))
    }

    /// A count setting's value (its default's count for a setting of another kind).
    pub fn count(&self, d: &Decl) -> u64 {
        match (self.get(d), d.default) {
            (Value::Count(n), _) | (_, Value::Count(n)) => n,
            _ => 0,
        }
    }

    /// A duration setting's value in ns (its default's for another kind).
    pub fn nanos(&self, d: &Decl) -> u64 {
        match (self.get(d), d.default) {
            (Value::Nanos(n), _) | (_, Value::Nanos(n)) => n,
            _ => 0,
        }
    }

    /// A size setting's value in bytes (its default's for another kind).
    pub fn bytes(&self, d: &Decl) -> u64 {
        match (self.get(d), d.default) {
            (Value::Bytes(n), _) | (_, Value::Bytes(n)) => n,
            _ => 0,
        }
    }

    /// A ratio or percentage setting's value (its default's for another kind).
    pub fn ratio(&self, d: &Decl) -> f64 {
        match (self.get(d), d.default) {
            (Value::Ratio(x), _) | (_, Value::Ratio(x)) => x,
            _ => 0.0,
        }
    }

    /// Sets a value; a value of the wrong kind or scope for the declaration is a
    /// programming error and is refused with a panic in debug builds, ignored in
    /// release.
    pub fn set(&mut self, d: &'static Decl, v: Value) {
        let fits = v.is_of(d.kind) && d.scope == S::SCOPE;
        debug_assert!(fits, "{}: wrong kind of value or scope", d.key);
        if fits {
            self.given.insert(d.key, v);
        }
    }

    /// These settings with `over`'s given values in place (a `[[run]]` over
    /// `[defaults]`).
    pub fn overlay(mut self, over: SettingMap<S>) -> Self {
        self.given.extend(over.given);
        self
    }

    /// True when every setting has its default.
    pub fn is_default(&self) -> bool {
        of_scope(S::SCOPE).all(|d| self.get(d) == d.default)
    }

    /// The settings that differ from their defaults, in declaration order.
    pub fn changed(&self) -> impl Iterator<Item = (&'static Decl, Value)> + '_ {
        of_scope(S::SCOPE)
            .map(|d| (d, self.get(d)))
            .filter(|(d, v)| *v != d.default)
    }

    /// Every setting as the result's workload echo carries it: all of them, default
    /// or not, under their echo names.
    pub fn echo(&self) -> serde_json::Map<String, serde_json::Value> {
        of_scope(S::SCOPE)
            .map(|d| (d.echo.to_string(), self.get(d).to_json()))
            .collect()
    }

    /// The settings that differ from their defaults, as job-file keys and values.
    pub fn to_toml(&self) -> toml::Table {
        self.changed()
            .map(|(d, v)| (d.key.to_string(), v.to_toml()))
            .collect()
    }
}

/// A command's settings (scope [`Scope::Command`]): the values given on its command
/// line; every other has its declared default. They have no job-file key and no echo.
pub type CommandSettings = SettingMap<OfCommand>;

// A plan serialises a workload's settings flattened into the workload, each under
// its echo field and as the result's JSON holds it (`"atomic_writes": true`), and only
// those that differ from their defaults: a setting moved into the registry keeps the
// plan JSON it had as a model field, so `rerun` reads older results unchanged.
impl<S: ScopeMark> Serialize for SettingMap<S> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let map: BTreeMap<&str, serde_json::Value> =
            self.changed().map(|(d, v)| (d.echo, v.to_json())).collect();
        map.serialize(s)
    }
}

impl<'de, S: ScopeMark> Deserialize<'de> for SettingMap<S> {
    /// Reads the declared fields of a flattened map; other keys belong to the rest of
    /// the workload (or to a newer version) and are left alone.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, serde_json::Value>::deserialize(d)?;
        let mut out = SettingMap::<S>::default();
        for decl in of_scope(S::SCOPE) {
            let Some(json) = map.get(decl.echo) else {
                continue;
            };
            let v = Value::from_json(decl.kind, json).ok_or_else(|| {
                serde::de::Error::custom(format!("{}: not a {}", decl.echo, decl.kind.type_doc()))
            })?;
            out.set(decl, v);
        }
        Ok(out)
    }
}

/// The Markdown table of `scope`'s settings that docs/job-file.md carries between
/// its `settings-table` markers.
pub fn markdown_table(scope: Scope) -> String {
    let mut s = String::from(
        "| key | type | default | flag | result field | what it does |\n\
         |---|---|---|---|---|---|\n",
    );
    for d in of_scope(scope) {
        let flag = d.flag.map(|f| format!("`--{f}`")).unwrap_or_default();
        let default = match d.default.text() {
            t if t.is_empty() => "none".to_string(),
            t => format!("`{t}`"),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {default} | {flag} | `{}` | {} |",
            d.key,
            d.kind.type_doc(),
            d.echo,
            d.doc
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The markers around `scope`'s generated table in docs/job-file.md.
    fn markers(scope: Scope) -> (String, String) {
        let name = scope.name();
        (
            format!(
                "<!-- settings-table:{name}:begin (generated from src/plan/settings; \
                 IOSCOPE_BLESS=1 cargo test settings_table rewrites it) -->\n"
            ),
            format!("<!-- settings-table:{name}:end -->"),
        )
    }

    #[test]
    fn declarations_are_unique_and_their_defaults_have_their_kind() {
        let mut seen = std::collections::BTreeSet::new();
        for d in declared::ALL {
            assert!(seen.insert(d.key), "{} declared twice", d.key);
            assert!(
                d.default.is_of(d.kind),
                "{}: default of another kind",
                d.key
            );
            assert!(!d.doc.is_empty() && !d.doc.contains('|'), "{}: doc", d.key);
            let unit_named = match d.kind {
                Kind::Bytes => d.echo.ends_with("_bytes"),
                Kind::Nanos => d.echo.ends_with("_ns"),
                Kind::Percent => d.echo.ends_with("_pct"),
                _ => true,
            };
            assert!(unit_named, "{}: the echo field must name its unit", d.key);
        }
    }

    #[test]
    fn settings_round_trip_through_text_toml_and_serde() {
        let mut s = WorkloadSettings::default();
        assert!(s.is_default());
        for d in of_scope(Scope::Workload) {
            let other = match d.default {
                Value::Flag(b) => Value::Flag(!b),
                Value::Count(n) => Value::Count(n + 1),
                Value::Bytes(n) => Value::Bytes(n + 4096),
                Value::Nanos(n) => Value::Nanos(n + 1_000_000),
                Value::Ratio(x) if d.kind == Kind::Percent => Value::Ratio(x / 2.0 + 1.0),
                Value::Ratio(x) => Value::Ratio(x * 2.0),
                Value::Text(t) => Value::Text(intern(&format!("{t}x.log"))),
                Value::Choice(w) => match d.kind {
                    Kind::Choice(words) => Value::Choice(words.iter().find(|&&o| o != w).unwrap()),
                    _ => unreachable!(),
                },
            };
            assert_eq!(d.parse_text(&other.text()), Ok(other), "{}", d.key);
            let back = match other.to_toml() {
                toml::Value::Boolean(b) => d.parse_input(Input::Bool(b)),
                toml::Value::Integer(i) => d.parse_input(Input::Int(i)),
                toml::Value::String(t) => d.parse_input(Input::Str(&t)),
                toml::Value::Float(x) => d.parse_input(Input::Float(x)),
                v => panic!("{v:?}"),
            };
            assert_eq!(back, Ok(other), "{}", d.key);
            s.set(d, other);
        }
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<WorkloadSettings>(&json).unwrap(), s);
    }

    #[test]
    fn a_wrong_value_says_what_was_expected() {
        static FLAG: Decl = Decl {
            key: "some_flag",
            kind: Kind::Flag,
            scope: Scope::Workload,
            default: Value::Flag(true),
            doc: "a flag",
            flag: None,
            heading: "Workload",
            echo: "some_flag",
            switch: false,
        };
        let d = &FLAG;
        let e = d.parse_text("maybe").unwrap_err();
        assert!(e.contains("'maybe' is not true or false"), "{e}");
        let e = d.parse_input(Input::Str("yes")).unwrap_err();
        assert!(
            e.contains("must be true or false, found a string \"yes\""),
            "{e}"
        );
    }

    /// docs/job-file.md's settings tables are generated from the declarations; this
    /// fails when one is stale (`IOSCOPE_BLESS=1` rewrites them).
    #[test]
    fn settings_table_in_the_job_file_docs_is_current() {
        for scope in [Scope::Workload, Scope::Run, Scope::Command] {
            let (begin, end) = markers(scope);
            crate::plan::generated_docs::check_section(
                "docs/job-file.md",
                &begin,
                &end,
                &markdown_table(scope),
                &format!("the {} settings table", scope.name()),
                "settings_table",
            );
        }
    }
}
