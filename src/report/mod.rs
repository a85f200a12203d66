//! Reporting: the result model and everything that renders it — the live terminal
//! lines, the JSON file and its interval stream.

pub mod analysis;
pub mod compare;
pub mod csv;
pub mod diskspd_xml;
pub mod export;
pub mod fio_json;
pub mod fio_terse;
pub mod format;
pub mod html;
pub mod html_paths;
pub mod json;
pub mod markdown;
pub mod net_html;
pub mod ranks_html;
pub mod repeats;
pub mod svg;
pub mod terminal;
#[cfg(test)]
mod testdata;
pub mod vdbench;
