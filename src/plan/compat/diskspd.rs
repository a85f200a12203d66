//! diskspd and SQLIO command lines → Plan (in progress).
use super::{CompatError, Translated};
use std::path::Path;
/// Stub.
pub fn parse_diskspd(_a: &[String], _t: Option<&str>) -> Result<Translated, CompatError> {
    Err(CompatError {
        source_name: "x".into(),
        line: 0,
        column_or_arg: None,
        msg: "todo".into(),
    })
}
/// Stub.
pub fn parse_sqlio(_a: &[String], _b: &Path, _t: Option<&str>) -> Result<Translated, CompatError> {
    Err(CompatError {
        source_name: "x".into(),
        line: 0,
        column_or_arg: None,
        msg: "todo".into(),
    })
}
