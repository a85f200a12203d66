//! A fixed byte pattern that writes carry instead of generated content (fio's
//! `verify_pattern`). The pattern repeats over the target by offset: the byte at
//! target offset `o` is `bytes[o % len]`, so every write of a region carries the same
//! bytes whatever its size or order. With verification on, each unit's header is
//! stamped over its first bytes and its checksum covers the pattern after it, so a
//! read of a changed pattern is a mismatch. Written in plans and job files as hex
//! (`"0xaa555aa5"`). fio's `%o` is the other form: every write carries its own
//! offset (8 bytes, little-endian, repeated over the write), written `"%o"`.

use serde::{Deserialize, Serialize};

/// Longest pattern a plan carries (fio allows longer; 256 bytes covers its examples and
/// diskspd's default write content, the bytes 0 to 255, and keeps the runtime's copy
/// of it fixed-size).
pub const MAX_PATTERN_BYTES: usize = 256;

/// The bytes, in the order they are written; empty for the offset form (`%o`),
/// which [`FillPattern::new`] never makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FillPattern(Vec<u8>);

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FillPatternError {
    #[error("an empty pattern")]
    Empty,
    #[error("'{0}' is not a hex number, a decimal number or a quoted string")]
    Part(String),
    #[error("{0} bytes: at most {MAX_PATTERN_BYTES}")]
    TooLong(usize),
    #[error("'%o' (the write's offset) stands alone: it cannot be mixed with other bytes")]
    Offset,
}

impl FillPattern {
    /// The fixed bytes; empty for the offset form.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// fio's `%o`: every write carries its own offset, as 8 little-endian bytes
    /// repeated over it (so a block written to the wrong place reads back wrong).
    pub const OFFSET: FillPattern = FillPattern(Vec::new());

    /// True for the offset form.
    pub fn is_offset(&self) -> bool {
        self.0.is_empty()
    }

    /// From bytes (1..=[`MAX_PATTERN_BYTES`] of them).
    pub fn new(bytes: Vec<u8>) -> Result<Self, FillPatternError> {
        match bytes.len() {
            0 => Err(FillPatternError::Empty),
            n if n > MAX_PATTERN_BYTES => Err(FillPatternError::TooLong(n)),
            _ => Ok(FillPattern(bytes)),
        }
    }

    /// Reads fio's pattern text: hex numbers (`0xaa55`, bytes in the order written;
    /// an odd digit count makes the first byte one digit), decimal numbers (the
    /// fewest bytes that hold them, least significant first, as fio lays out an
    /// integer) and quoted strings (`"abcd"`), one after another; or `%o` alone (the
    /// offset form; mixed with other bytes it is refused).
    pub fn parse_fio(text: &str) -> Result<Self, FillPatternError> {
        let mut out = Vec::new();
        let mut rest = text.trim();
        if rest == "%o" {
            return Ok(FillPattern::OFFSET);
        }
        while !rest.is_empty() {
            rest = if rest.starts_with("%o") {
                return Err(FillPatternError::Offset);
            } else if let Some(q) = rest.strip_prefix('"') {
                let end = q
                    .find('"')
                    .ok_or_else(|| FillPatternError::Part(rest.to_string()))?;
                out.extend_from_slice(&q.as_bytes()[..end]);
                &q[end + 1..]
            } else if rest.len() > 2 && rest[..2].eq_ignore_ascii_case("0x") {
                let body = &rest[2..];
                // A second "0x" starts the next number (fio's 0xff0x14).
                let digits = body
                    .char_indices()
                    .take_while(|&(i, c)| {
                        c.is_ascii_hexdigit() && !body[i..].to_ascii_lowercase().starts_with("0x")
                    })
                    .count();
                if digits == 0 {
                    return Err(FillPatternError::Part(rest.to_string()));
                }
                push_hex(&mut out, &body[..digits]);
                &body[digits..]
            } else {
                let digits = rest.chars().take_while(char::is_ascii_digit).count();
                let value: u32 = rest[..digits]
                    .parse()
                    .map_err(|_| FillPatternError::Part(rest.to_string()))?;
                let bytes = value.to_le_bytes();
                let used = (4 - value.leading_zeros() as usize / 8).max(1);
                out.extend_from_slice(&bytes[..used]);
                &rest[digits..]
            }
            .trim_start();
        }
        FillPattern::new(out)
    }

    /// `0x` and the bytes in hex, as plans and job files write it (`%o` for the
    /// offset form).
    pub fn hex(&self) -> String {
        if self.is_offset() {
            return "%o".into();
        }
        let mut s = String::from("0x");
        for b in &self.0 {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }
}

/// Appends hex digits as bytes, the first byte one digit when the count is odd.
fn push_hex(out: &mut Vec<u8>, digits: &str) {
    let odd = digits.len() % 2;
    if odd == 1 {
        out.push(u8::from_str_radix(&digits[..1], 16).unwrap_or(0));
    }
    for i in (odd..digits.len()).step_by(2) {
        out.push(u8::from_str_radix(&digits[i..i + 2], 16).unwrap_or(0));
    }
}

impl Serialize for FillPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for FillPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        FillPattern::parse_fio(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_pattern_forms() {
        let p = |t: &str| FillPattern::parse_fio(t).map(|p| p.bytes().to_vec());
        assert_eq!(p("0xaa555aa5"), Ok(vec![0xaa, 0x55, 0x5a, 0xa5]));
        assert_eq!(p("0xABC"), Ok(vec![0x0a, 0xbc]));
        assert_eq!(p("0xff0x14"), Ok(vec![0xff, 0x14]));
        assert_eq!(p("258"), Ok(vec![0x02, 0x01]));
        assert_eq!(p("0"), Ok(vec![0]));
        assert_eq!(p("0x01\"ab\""), Ok(vec![1, b'a', b'b']));
        assert_eq!(FillPattern::parse_fio(" %o "), Ok(FillPattern::OFFSET));
        assert_eq!(FillPattern::OFFSET.hex(), "%o");
        assert_eq!(p("0xff%o"), Err(FillPatternError::Offset));
        assert!(matches!(p("zz"), Err(FillPatternError::Part(_))));
        assert!(matches!(
            p(&format!("0x{}", "ab".repeat(257))),
            Err(FillPatternError::TooLong(257))
        ));
        let back: FillPattern = serde_json::from_str(
            &serde_json::to_string(&FillPattern::parse_fio("0xaa55").unwrap()).unwrap(),
        )
        .unwrap();
        assert_eq!(back.hex(), "0xaa55");
    }
}
