//! The document formats a result can be rendered to, as one type. Every place that
//! turns a [`ResultDoc`] into a file or stdout (`--json`/`--html`/`--csv`/`--fio-json`,
//! `--output-format`, `ioscope report --format`, `--markdown`) dispatches on
//! [`Format`] instead of matching format names.

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
    /// JSON, as `ioscope report` has always read it).
    pub fn from_extension(ext: &str) -> Option<Format> {
        Some(match ext.to_ascii_lowercase().as_str() {
            "html" | "htm" => Format::Html,
            "csv" => Format::Csv,
            "md" => Format::Markdown,
            "xml" => Format::DiskspdXml,
            "json" => Format::FioJson,
            _ => return None,
        })
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
    }
}
