//! Printing an error with its causes. Error types say only their own context in
//! `Display` and expose the cause through `source()`; [`Chain`] walks that chain
//! ("context: cause: root cause"). Every place that turns an error into text — the
//! binary's last word, a run's fatal message — goes through it, so no cause is lost
//! and none is printed twice.

use std::fmt;

/// Displays an error followed by each of its causes, separated by ": ".
pub struct Chain<'a>(pub &'a dyn std::error::Error);

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut src = self.0.source();
        while let Some(c) = src {
            write!(f, ": {c}")?;
            src = c.source();
        }
        Ok(())
    }
}

/// The error and its causes as one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    Chain(e).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("opening the journal")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn each_cause_once() {
        let e = Outer(std::io::Error::other("disk on fire"));
        assert_eq!(chain(&e), "opening the journal: disk on fire");
    }
}
