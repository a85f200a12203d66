//! Sections of docs/ generated from the code's own tables (the job-file settings,
//! vdbench's parameters): a test compares each with what the code would write now,
//! and fails when it is stale; with `IOSCOPE_BLESS` set it rewrites it instead.

/// Checks the section of `path` (relative to the crate) between the markers
/// `begin` and `end` against `want`; `what` names it and `rerun` is the test
/// filter that rewrites it, both for the failure's message.
pub(crate) fn check_section(
    path: &str,
    begin: &str,
    end: &str,
    want: &str,
    what: &str,
    rerun: &str,
) {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (Some(b), Some(e)) = (doc.find(begin), doc.find(end)) else {
        panic!("{path} lacks the markers of {what}");
    };
    let current = &doc[b + begin.len()..e];
    if current != want && std::env::var_os("IOSCOPE_BLESS").is_some() {
        let fresh = format!("{}{want}{}", &doc[..b + begin.len()], &doc[e..]);
        std::fs::write(&path, fresh).unwrap_or_else(|e| panic!("write {path}: {e}"));
        return;
    }
    assert_eq!(
        current, want,
        "{path}: {what} is stale: run IOSCOPE_BLESS=1 cargo test {rerun}"
    );
}
