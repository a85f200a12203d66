//! The reading of `tree:smb://[USER@]HOST[:PORT]/SHARE/DIR?depth=…` (issue 25): the
//! server's part by [`super::parse`], so a tree takes its credentials exactly as an
//! `smb://` file does (never from the URI), and the tree's keys by
//! [`FileSetSpec::parse_tree`]. It needs no `smb` feature: parsing does no I/O.

use crate::plan::fileset::{FileSetSpec, RemoteDir};

/// Reads what follows `tree:` when it is an `smb://` URI. `Err`: why, in words.
pub fn parse_tree(rest: &str) -> Result<FileSetSpec, String> {
    let (base, query) = rest.split_once('?').unwrap_or((rest, ""));
    let smb = super::parse(base).map_err(|e| match e {
        super::UriError::Shape(_) => format!(
            "{e} (in a tree: tree:smb://[USER@]HOST[:PORT]/SHARE/DIR?depth=D&width=W&files=F&size=BYTES, \
             DIR the tree's anchor inside the share)"
        ),
        e => e.to_string(),
    })?;
    let mut spec =
        FileSetSpec::parse_tree(&format!("/{}?{query}", smb.path)).map_err(|e| e.to_string())?;
    spec.remote = Some(RemoteDir::Smb(Box::new(smb)));
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_on_a_share_parses_and_writes_back() {
        let uri = "smb://bench@127.0.0.1:4450/data/t?depth=2&width=2&files=3&size=4096";
        let spec = parse_tree(uri).unwrap();
        assert_eq!(spec.dir, std::path::PathBuf::from("/t"));
        assert_eq!(spec.count, 12);
        assert_eq!(spec.file_bytes, 4096);
        let Some(RemoteDir::Smb(s)) = &spec.remote else {
            panic!("not an SMB tree: {spec:?}");
        };
        assert_eq!((s.share.as_str(), s.port), ("data", 4450));
        assert_eq!(spec.uri(), format!("tree:{uri}"));
    }

    #[test]
    fn a_password_or_a_missing_anchor_is_refused() {
        let e = parse_tree("smb://u:pw@h/data/t?depth=1&width=1&files=1").unwrap_err();
        assert!(e.contains("password"), "{e}");
        assert!(!e.contains("pw@"), "{e}");
        let e = parse_tree("smb://h/data?depth=1&width=1&files=1").unwrap_err();
        assert!(e.contains("tree:smb://"), "{e}");
        let e = parse_tree("smb://h/data/t?depth=1&width=1&files=1&bogus=1").unwrap_err();
        assert!(e.contains("bogus"), "{e}");
    }
}
