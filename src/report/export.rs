//! The document formats a result can be rendered to, as one type, and the output forms
//! users name, as one table. Every place that turns a [`ResultDoc`] into a file or
//! stdout (`--json`/`--html`/`--csv`/`--fio-json`, `--output-format`, `ioscope report
//! --format`, `--markdown`) dispatches on [`Format`] instead of matching format names;
//! every name a user types for a form (`--output-format`, `report --format`, fio's own
//! `--output-format` words, `report -o`'s extensions) is declared once in [`FORMS`],
//! and the command line's value parsers and help text are built from it.

use crate::result::ResultDoc;

/// A rendering of a whole result document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The result itself (schema `ioscope.result/…`), pretty-printed.
    Json,
    /// fio 3.x-compatible JSON.
    FioJson,
    /// fio's `json+`: fio JSON with each direction's completion-latency histogram
    /// (`clat_ns.bins`).
    FioJsonPlus,
    /// Self-contained HTML with charts.
    Html,
    /// Runs and intervals as CSV.
    Csv,
    /// A Markdown summary table.
    Markdown,
    /// diskspd's XML result (`-Rxml`).
    DiskspdXml,
    /// fio's terse lines (`--output-format=terse`) of the given terse version.
    FioTerse(u32),
}

impl Format {
    /// Renders `doc` in this format.
    pub fn render(self, doc: &ResultDoc) -> String {
        match self {
            Format::Json => {
                let mut s = serde_json::to_string_pretty(doc).unwrap_or_default();
                s.push('\n');
                s
            }
            Format::FioJson => super::fio_json::render(doc, false),
            Format::FioJsonPlus => super::fio_json::render(doc, true),
            Format::Html => super::html::render_html(doc),
            Format::Csv => super::csv::render_csv(doc),
            Format::Markdown => {
                let mut s = super::markdown::render_markdown(doc);
                s.push('\n');
                s
            }
            Format::DiskspdXml => super::diskspd_xml::render(doc),
            Format::FioTerse(v) => super::fio_terse::render(doc, v),
        }
    }

    /// The format a file extension implies (`.html`, `.csv`, `.md`; `.json` is fio
    /// JSON, as `ioscope report` has always read it): [`Form::extensions`].
    pub fn from_extension(ext: &str) -> Option<Format> {
        let ext = ext.to_ascii_lowercase();
        FORMS
            .iter()
            .find(|f| f.extensions.contains(&ext.as_str()))
            .and_then(|f| f.format)
    }
}

/// One output form as users name it: where it may go, and the [`Format`] that
/// writes it.
#[derive(Debug, PartialEq, Eq)]
pub struct Form {
    /// The name `--output-format` and `report --format` take.
    pub name: &'static str,
    /// Other names for it there.
    pub aliases: &'static [&'static str],
    /// fio's own `--output-format` word for it (`ioscope fio …` only).
    pub fio_name: Option<&'static str>,
    /// The help line the command line shows for it.
    pub doc: &'static str,
    /// The file extensions that imply it when `report -o PATH` is given no `--format`.
    pub extensions: &'static [&'static str],
    /// Whether stdout can carry it (`--output-format`).
    pub stdout: bool,
    /// Whether `ioscope report --format` renders it.
    pub report: bool,
    /// The writer; None for the text stdout carries by default.
    pub format: Option<Format>,
}

/// Every output form, in the order help lists them.
pub const FORMS: [Form; 9] = [
    Form {
        name: "text",
        aliases: &[],
        fio_name: None,
        doc: "Interval lines, summaries and tables for a person (stdout's default)",
        extensions: &[],
        stdout: true,
        report: false,
        format: None,
    },
    Form {
        name: "json",
        aliases: &[],
        fio_name: None,
        doc: "The result JSON (schema ioscope.result/…)",
        extensions: &[],
        stdout: true,
        report: false,
        format: Some(Format::Json),
    },
    Form {
        name: "html",
        aliases: &[],
        fio_name: None,
        doc: "A self-contained HTML report with charts",
        extensions: &["html", "htm"],
        stdout: false,
        report: true,
        format: Some(Format::Html),
    },
    Form {
        name: "csv",
        aliases: &[],
        fio_name: None,
        doc: "Runs and intervals as CSV",
        extensions: &["csv"],
        stdout: false,
        report: true,
        format: Some(Format::Csv),
    },
    Form {
        name: "markdown",
        aliases: &["md"],
        fio_name: None,
        doc: "A Markdown summary table",
        extensions: &["md"],
        stdout: false,
        report: true,
        format: Some(Format::Markdown),
    },
    Form {
        name: "fio-json",
        aliases: &[],
        fio_name: Some("json"),
        doc: "fio 3.x-compatible JSON",
        extensions: &["json"],
        stdout: true,
        report: true,
        format: Some(Format::FioJson),
    },
    Form {
        name: "fio-json+",
        aliases: &[],
        fio_name: Some("json+"),
        doc: "fio's json+: fio JSON with latency histogram bins (clat_ns.bins)",
        extensions: &[],
        stdout: true,
        report: true,
        format: Some(Format::FioJsonPlus),
    },
    Form {
        name: "diskspd-xml",
        aliases: &[],
        fio_name: None,
        doc: "diskspd's XML result (-Rxml)",
        extensions: &["xml"],
        stdout: false,
        report: true,
        format: Some(Format::DiskspdXml),
    },
    Form {
        name: "fio-terse",
        aliases: &[],
        fio_name: Some("terse"),
        doc: "fio's terse lines, version 3 (fio's --minimal)",
        extensions: &[],
        stdout: true,
        report: true,
        format: Some(Format::FioTerse(3)),
    },
];

/// Where a form is named: stdout (`--output-format`) or `ioscope report --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Stdout,
    Report,
}

impl Form {
    /// The forms `place` takes, in table order.
    pub fn at(place: Place) -> impl Iterator<Item = &'static Form> {
        FORMS.iter().filter(move |f| match place {
            Place::Stdout => f.stdout,
            Place::Report => f.report,
        })
    }

    /// The form `place` knows by `name` or one of its aliases.
    pub fn named(place: Place, name: &str) -> Option<&'static Form> {
        Form::at(place).find(|f| f.name == name || f.aliases.contains(&name))
    }

    /// The stdout form fio calls `name` (its own `--output-format` word).
    pub fn fio_named(name: &str) -> Option<&'static Form> {
        Form::at(Place::Stdout).find(|f| f.fio_name == Some(name))
    }

    /// "a, b or c": the names `place` takes, for an error message.
    pub fn names(place: Place) -> String {
        let names: Vec<&str> = Form::at(place).map(|f| f.name).collect();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_renders_and_json_round_trips() {
        let doc = super::super::testdata::fixtures().remove(0).1;
        for f in [
            Format::Json,
            Format::FioJson,
            Format::FioJsonPlus,
            Format::Html,
            Format::Csv,
            Format::Markdown,
            Format::DiskspdXml,
            Format::FioTerse(3),
        ] {
            assert!(!f.render(&doc).is_empty(), "{f:?}");
        }
        let back: ResultDoc = serde_json::from_str(&Format::Json.render(&doc)).unwrap();
        assert_eq!(back.runs.len(), doc.runs.len());
        assert_eq!(Format::from_extension("MD"), Some(Format::Markdown));
        assert_eq!(Format::from_extension("txt"), None);
        assert_eq!(Format::from_extension("htm"), Some(Format::Html));
        assert_eq!(Format::from_extension("json"), Some(Format::FioJson));
    }

    #[test]
    fn forms_are_named_once_and_each_has_a_place() {
        for (i, f) in FORMS.iter().enumerate() {
            assert!(f.stdout || f.report, "{}", f.name);
            assert!(!f.doc.is_empty(), "{}", f.name);
            for other in &FORMS[i + 1..] {
                assert_ne!(f.name, other.name);
                assert!(!other.aliases.contains(&f.name), "{}", f.name);
                assert!(f.fio_name.is_none() || f.fio_name != other.fio_name);
            }
        }
        assert_eq!(
            Form::names(Place::Stdout),
            "text, json, fio-json, fio-json+ or fio-terse"
        );
        let md = Form::named(Place::Report, "md").unwrap();
        assert_eq!(md.format, Some(Format::Markdown));
        assert_eq!(Form::named(Place::Stdout, "markdown"), None);
        assert_eq!(Form::named(Place::Report, "json"), None);
        let terse = Form::fio_named("terse").unwrap().format;
        assert_eq!(terse, Some(Format::FioTerse(3)));
    }
}
