//! Reporting: the result model and everything that renders it — the live terminal
//! lines, the JSON file and its interval stream.

pub mod json;
pub mod model;
pub mod terminal;
