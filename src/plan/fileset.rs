//! File sets: a directory and the names of N files (or directories) in it, the
//! target of the file-operation engines (`filecreate`, `filestat`, `filedelete`,
//! `dircreate`, `dirstat`, `dirdelete`), which time one file-system call per file
//! rather than reads and writes of bytes. Written as a target URI,
//! `files:DIR?count=N[&per=M][&name=FORMAT][&size=BYTES]`, so that it travels through
//! every front end (flags, native job file, fio's `nrfiles`/`filename_format`) like
//! any other target, and the result records it as given.
//!
//! The set is laid out as N slots of the workload's block size: the I/O at offset
//! `i × bs` is the operation on file `i`. Sequential streams therefore walk the
//! files in order, each stream its own `count / streams` of them, which is fio's
//! layout of `nrfiles` files per clone of a job.

use std::path::PathBuf;

/// A set of files in one directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSetSpec {
    /// Where the files are (must exist).
    pub dir: PathBuf,
    /// Files in the set.
    pub count: u64,
    /// Files per name group: `{clone}` is `i / per`, `{file}` is `i % per` (fio's
    /// `$jobnum` and `$filenum`, with `per` = `nrfiles`). Equal to `count` unless given.
    pub per: u64,
    /// Name of file `i` inside `dir`: `{n}` = i, `{clone}`, `{file}` as above.
    pub name: String,
    /// Length given to each file that a stat or delete run lays out beforehand.
    pub file_bytes: u64,
}

/// The name format when none is given: `f.0`, `f.1`, …
pub const DEFAULT_NAME: &str = "f.{n}";

/// Why a `files:` URI was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileSetError {
    #[error("expected files:DIR?count=N[&per=M][&name=FORMAT][&size=BYTES]")]
    Shape,
    #[error("files: needs count=N (the number of files, at least 1)")]
    NoCount,
    #[error("'{key}={value}': {why}")]
    Value {
        key: String,
        value: String,
        why: String,
    },
    #[error("unknown parameter '{0}' (known: count, per, name, size)")]
    Unknown(String),
    #[error(
        "name '{0}' must name files inside the directory: no '/', and {{n}} or {{file}} \
         so that the names differ"
    )]
    Name(String),
}

impl FileSetSpec {
    /// Parses what follows `files:`.
    pub fn parse(rest: &str) -> Result<FileSetSpec, FileSetError> {
        let (dir, query) = rest.split_once('?').ok_or(FileSetError::NoCount)?;
        if dir.is_empty() {
            return Err(FileSetError::Shape);
        }
        let mut count = None;
        let mut per = None;
        let mut name = DEFAULT_NAME.to_string();
        let mut file_bytes = 0;
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or(FileSetError::Shape)?;
            let bad = |why: String| FileSetError::Value {
                key: key.into(),
                value: value.into(),
                why,
            };
            match key {
                "count" => {
                    count = Some(super::units::parse_count(value).map_err(|e| bad(e.to_string()))?)
                }
                "per" => {
                    per = Some(super::units::parse_count(value).map_err(|e| bad(e.to_string()))?)
                }
                "name" => name = value.to_string(),
                "size" => {
                    file_bytes = super::units::parse_size_allow_zero(value)
                        .map_err(|e| bad(e.to_string()))?
                }
                other => return Err(FileSetError::Unknown(other.into())),
            }
        }
        let count = count.ok_or(FileSetError::NoCount)?;
        let per = per.unwrap_or(count);
        if count % per != 0 {
            return Err(FileSetError::Value {
                key: "per".into(),
                value: per.to_string(),
                why: format!("count {count} is not a multiple of it"),
            });
        }
        let distinct = name.contains("{n}")
            || (name.contains("{file}") && (per == count || name.contains("{clone}")));
        if name.is_empty() || name.contains('/') || !distinct {
            return Err(FileSetError::Name(name));
        }
        Ok(FileSetSpec {
            dir: PathBuf::from(dir),
            count,
            per,
            name,
            file_bytes,
        })
    }

    /// The URI [`FileSetSpec::parse`] reads back.
    pub fn uri(&self) -> String {
        let mut s = format!("files:{}?count={}", self.dir.display(), self.count);
        if self.per != self.count {
            s.push_str(&format!("&per={}", self.per));
        }
        if self.name != DEFAULT_NAME {
            s.push_str(&format!("&name={}", self.name));
        }
        if self.file_bytes > 0 {
            s.push_str(&format!("&size={}", self.file_bytes));
        }
        s
    }

    /// The name of file `i` (inside [`FileSetSpec::dir`]).
    pub fn file_name(&self, i: u64) -> String {
        self.name
            .replace("{n}", &i.to_string())
            .replace("{clone}", &(i / self.per).to_string())
            .replace("{file}", &(i % self.per).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_writes_back() {
        let s = FileSetSpec::parse("/d?count=6&per=3&name=t0.{clone}.{file}&size=4k").unwrap();
        assert_eq!(s.count, 6);
        assert_eq!(s.file_name(0), "t0.0.0");
        assert_eq!(s.file_name(4), "t0.1.1");
        assert_eq!(s.file_bytes, 4096);
        assert_eq!(
            FileSetSpec::parse(s.uri().strip_prefix("files:").unwrap()),
            Ok(s)
        );
        let d = FileSetSpec::parse("dir?count=2").unwrap();
        assert_eq!((d.file_name(1).as_str(), d.per), ("f.1", 2));
    }

    #[test]
    fn refuses_what_cannot_name_distinct_files() {
        assert_eq!(FileSetSpec::parse("/d"), Err(FileSetError::NoCount));
        assert!(matches!(
            FileSetSpec::parse("/d?count=0"),
            Err(FileSetError::Value { .. })
        ));
        assert!(matches!(
            FileSetSpec::parse("/d?count=5&per=2"),
            Err(FileSetError::Value { .. })
        ));
        assert!(matches!(
            FileSetSpec::parse("/d?count=5&name=same"),
            Err(FileSetError::Name(_))
        ));
        assert!(matches!(
            FileSetSpec::parse("/d?count=4&per=2&name=x.{file}"),
            Err(FileSetError::Name(_))
        ));
        assert!(matches!(
            FileSetSpec::parse("/d?count=4&name=a/{n}"),
            Err(FileSetError::Name(_))
        ));
        assert_eq!(
            FileSetSpec::parse("/d?count=4&x=1"),
            Err(FileSetError::Unknown("x".into()))
        );
    }
}
