//! vdbench parameter files → Plan (in progress).
use super::{CompatError, Translated};
/// Stub.
pub fn parse_str(source_name: &str, _text: &str) -> Result<Translated, CompatError> {
    Err(CompatError {
        source_name: source_name.into(),
        line: 0,
        column_or_arg: None,
        msg: "todo".into(),
    })
}
