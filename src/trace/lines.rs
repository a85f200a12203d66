//! Numbered lines of a text trace, one at a time (traces run to gigabytes): a
//! trailing `\r` is dropped, a line that is not UTF-8 or longer than
//! [`MAX_LINE_BYTES`] is an error naming its line, as are read errors. Also the
//! number parsing the text formats share.

use std::io::{BufRead, Read};
use std::path::Path;

use super::TraceError;

/// No trace line comes near this; a longer one is a binary file or garbage.
pub(super) const MAX_LINE_BYTES: usize = 64 * 1024;

pub(super) struct Lines<'a, R> {
    r: R,
    file: &'a Path,
    buf: Vec<u8>,
    /// The number of the line last returned (1-based).
    no: u64,
}

impl<'a, R: BufRead> Lines<'a, R> {
    pub fn new(r: R, file: &'a Path) -> Self {
        Lines {
            r,
            file,
            buf: Vec::new(),
            no: 0,
        }
    }

    /// The next line's number and text without its line ending, or None at the end
    /// of the file.
    pub fn next_line(&mut self) -> Result<Option<(u64, &str)>, TraceError> {
        self.buf.clear();
        self.no = self.no.saturating_add(1);
        let limit = MAX_LINE_BYTES as u64 + 2;
        let n = self
            .r
            .by_ref()
            .take(limit)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| TraceError::io(self.file, format!("cannot read line {}", self.no), e))?;
        if n == 0 {
            return Ok(None);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.buf.len() > MAX_LINE_BYTES {
            let what = format!("line longer than {MAX_LINE_BYTES} bytes: not a text trace");
            return Err(TraceError::line(self.file, self.no, what));
        }
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((self.no, s))),
            Err(_) => Err(TraceError::line(self.file, self.no, "not UTF-8 text")),
        }
    }
}

/// A whole number in `T`'s range: "bad offset '-4': expected a whole number from 0
/// to 18446744073709551615".
pub(super) fn number<T>(s: &str, what: &str) -> Result<T, String>
where
    T: std::str::FromStr + Bounded,
{
    let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match s.parse::<T>() {
        Ok(v) if digits => Ok(v),
        _ => Err(format!(
            "bad {what} '{}': expected a whole number from 0 to {}",
            shorten(s),
            T::MAX_TEXT
        )),
    }
}

/// The unsigned types [`number`] parses, with their largest value for messages.
pub(super) trait Bounded {
    const MAX_TEXT: &'static str;
}
impl Bounded for u64 {
    const MAX_TEXT: &'static str = "18446744073709551615";
}
impl Bounded for u32 {
    const MAX_TEXT: &'static str = "4294967295";
}

/// At most 40 characters of `s`, for quoting user input in a message.
pub(super) fn shorten(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_lines_without_endings() {
        let text = b"a\r\n\nb";
        let mut l = Lines::new(&text[..], Path::new("t"));
        assert_eq!(l.next_line().unwrap(), Some((1, "a")));
        assert_eq!(l.next_line().unwrap(), Some((2, "")));
        assert_eq!(l.next_line().unwrap(), Some((3, "b")));
        assert_eq!(l.next_line().unwrap(), None);
    }

    #[test]
    fn binary_and_endless_lines_are_errors() {
        let mut l = Lines::new(&b"ok\n\xff\xfe\n"[..], Path::new("t"));
        l.next_line().unwrap();
        assert_eq!(
            l.next_line().unwrap_err().to_string(),
            "t: line 2: not UTF-8 text"
        );
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        let mut l = Lines::new(&long[..], Path::new("t"));
        let e = l.next_line().unwrap_err();
        assert_eq!(e.record, 1);
    }

    #[test]
    fn numbers_in_range_only() {
        assert_eq!(
            number::<u64>("18446744073709551615", "offset"),
            Ok(u64::MAX)
        );
        for bad in ["-1", "+1", "", "1.5", "0x10", "18446744073709551616"] {
            let e = number::<u64>(bad, "offset").unwrap_err();
            assert!(e.starts_with("bad offset '"), "{e}");
        }
        let e = number::<u32>("4294967296", "length").unwrap_err();
        assert_eq!(
            e,
            "bad length '4294967296': expected a whole number from 0 to 4294967295"
        );
        assert_eq!(shorten(&"é".repeat(50)).chars().count(), 41);
    }
}
