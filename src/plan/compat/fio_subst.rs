//! fio's substitutions in job-file option lines, done as fio does them before an
//! option is parsed, so the translator sees the value fio would see:
//!
//! - `${VAR}` becomes the environment variable's value, or nothing when it is unset
//!   (fio substitutes an empty string then; the translation says so in a warning,
//!   since a job that meant to be given a value usually breaks quietly).
//! - The reserved keywords `$pagesize`, `$mb_memory` and `$ncpus` become this
//!   machine's figures; when one was replaced and the value holds `+ - * /`, fio
//!   hands the value to `bc`, so it is evaluated here as `bc` would (integers,
//!   division truncating, `^` a power).
//! - A numeric value in parentheses, `(3*1024)`, is fio's arithmetic expression:
//!   evaluated the same way. In a time option fio's units inside the parentheses are
//!   microseconds, so there the result is given in `us`.
//!
//!
//! [`fio_units`] is fio's reading of unit suffixes under `kb_base`, applied to each
//! job's options once its `kb_base` is known.
//!
//! The trade-off: keyword values are those of the machine that translates the job,
//! which is where fio would run it; a plan converted here and run elsewhere carries
//! this machine's numbers, and the warnings say which.

/// fio's options whose values are text, never read with units: its string options
/// (`FIO_OPT_STR_STORE` in options.c and the engines') and the log names, so a
/// path such as `directory=/mnt/1GiB` stays as written.
pub const TEXT_OPTIONS: &[&str] = &[
    "arguments",
    "bindname",
    "brick",
    "buffer_pattern",
    "cgroup",
    "clientname",
    "clustername",
    "comm",
    "conf",
    "cont",
    "description",
    "directory",
    "donorname",
    "dp_scheme",
    "exec_postrun",
    "exec_prerun",
    "filename",
    "filename_format",
    "gpu_dev_ids",
    "hdfsdirectory",
    "hostname",
    "http_host",
    "http_pass",
    "http_s3_key",
    "http_s3_keyid",
    "http_s3_region",
    "http_s3_security_token",
    "http_s3_sse_customer_algorithm",
    "http_s3_sse_customer_key",
    "http_s3_storage_class",
    "http_swift_auth_token",
    "http_user",
    "initiator",
    "interface",
    "ioengine",
    "ioscheduler",
    "libblkio_driver",
    "libblkio_path",
    "libblkio_pre_connect_props",
    "libblkio_pre_start_props",
    "merge_blktrace_file",
    "name",
    "namenode",
    "nfs_url",
    "object_class",
    "opendir",
    "pi_chk",
    "pool",
    "profile",
    "program",
    "rbd_encryption_format",
    "rbd_encryption_passphrase",
    "rbdname",
    "read_iolog",
    "replay_redirect",
    "svcl",
    "uri",
    "verify_pattern",
    "volume",
    "wait_for",
    "write_bw_log",
    "write_hist_log",
    "write_iolog",
    "write_iops_log",
    "write_lat_log",
    "xnvme_admin",
    "xnvme_async",
    "xnvme_be",
    "xnvme_dev_subnqn",
    "xnvme_mem",
    "xnvme_sync",
];

/// A value with every number fio reads otherwise than ioscope given in bytes, under
/// the job's `kb_base` (1024, fio's default, or 1000); each part between `,` `:`
/// `/` and `-` looked at on its own (`bssplit=8KiB/50:64KiB/50`, `bsrange=4k-64k`);
/// `None` when there is no such number. Only for options that are not times (`1m`
/// is a minute there).
pub fn fio_units(value: &str, kb_base: u64) -> Option<String> {
    const SEPARATORS: [char; 4] = [',', ':', '/', '-'];
    let mut out = String::with_capacity(value.len());
    let mut changed = false;
    for part in value.split_inclusive(SEPARATORS) {
        let (body, sep) = match part.strip_suffix(SEPARATORS) {
            Some(b) => (b, &part[b.len()..]),
            None => (part, ""),
        };
        match fio_bytes(body.trim(), kb_base) {
            Some(n) => {
                out.push_str(&n.to_string());
                changed = true;
            }
            None => out.push_str(body),
        }
        out.push_str(sep);
    }
    changed.then_some(out)
}

/// The bytes of one `NUMBER UNIT` where fio's reading differs from ioscope's, which
/// takes `k`, `kb` and `kib` alike as 1024 (fio's `__get_mult_bytes`): with
/// `kb_base=1024` an IEC unit (`kib`… in any case) is powers of 1000 and `ki`…
/// (read by its first letter) powers of 1024; with `kb_base=1000` the IEC units
/// are powers of 1024 and `k`, `kb`, `ki`… powers of 1000.
fn fio_bytes(part: &str, kb_base: u64) -> Option<u64> {
    let digits = part.len() - part.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (num, unit) = part.split_at(digits);
    if num.is_empty() || unit.is_empty() || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let unit = unit.to_ascii_lowercase();
    let pow = "kmgtp".find(unit.chars().next()?)? as u32 + 1;
    // Other spellings (`kk`, `ms`) are left to the option's own parser.
    let base: u64 = match (unit.as_bytes(), kb_base == 1000) {
        ([_, b'i', b'b'], false) => 1000,
        ([_, b'i'], false) => 1024,
        ([_] | [_, b'b'] | [_, b'i'], true) => 1000,
        _ => return None,
    };
    num.parse::<u64>().ok()?.checked_mul(base.checked_pow(pow)?)
}

/// Looks up what fio substitutes: `${VAR}` by the variable's name, and the reserved
/// keywords by their spelling with the `$` (`$pagesize`, `$mb_memory`, `$ncpus`).
pub type SubstLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// fio's reserved keywords, longest first so none is a prefix of another's match.
pub const KEYWORDS: [&str; 3] = ["$mb_memory", "$pagesize", "$ncpus"];

/// This machine's value of a reserved keyword, as fio computes it where it runs.
pub fn machine_keyword(word: &str) -> Option<String> {
    let v = match word {
        "$pagesize" => sysconf(libc::_SC_PAGESIZE),
        "$ncpus" => sysconf(libc::_SC_NPROCESSORS_ONLN),
        "$mb_memory" => {
            let bytes =
                i128::from(sysconf(libc::_SC_PHYS_PAGES)) * i128::from(sysconf(libc::_SC_PAGESIZE));
            i64::try_from(bytes / (1 << 20)).unwrap_or(0)
        }
        _ => 0,
    };
    (v > 0).then(|| v.to_string())
}

// c_long is i64 on 64-bit targets and i32 on others; the conversion is for those.
#[allow(clippy::useless_conversion)]
fn sysconf(name: libc::c_int) -> i64 {
    // SAFETY: sysconf only reads a system setting by number; no memory is passed.
    i64::from(unsafe { libc::sysconf(name) })
}

/// Why a value could not be substituted.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum SubstError {
    /// `why` is shown inline (not a `source`): it only makes sense next to `expr`.
    #[error("'{expr}' is not an arithmetic expression fio can evaluate: {why}")]
    Arithmetic { expr: String, why: ArithError },
    #[error("{0} has no value on this machine")]
    NoKeyword(String),
}

/// What is wrong in an arithmetic expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArithError {
    #[error("unexpected '{0}'")]
    Unexpected(char),
    #[error("it ends too early")]
    TooShort,
    #[error("a '(' without its ')'")]
    Unclosed,
    #[error("division by zero")]
    DivisionByZero,
    #[error("overflow")]
    Overflow,
    #[error("a negative or huge exponent")]
    Exponent,
    /// A run of digits that is not an i64 (shown inline, not a `source`).
    #[error("{0}")]
    Number(std::num::ParseIntError),
}

/// What a substitution did, for the translation's warnings.
#[derive(Debug, Default, PartialEq)]
pub struct Substituted {
    pub value: String,
    /// `${VAR}` names that were unset (replaced by nothing).
    pub unset: Vec<String>,
    /// Keywords replaced, with the value used.
    pub keywords: Vec<(String, String)>,
    /// True when an arithmetic expression was evaluated.
    pub evaluated: bool,
}

/// Applies fio's substitutions to one option value. `is_time` says the option is a
/// time, where fio reads a bare number inside parentheses as microseconds.
pub fn substitute(
    value: &str,
    lookup: SubstLookup<'_>,
    is_time: bool,
) -> Result<Substituted, SubstError> {
    let mut out = Substituted::default();
    let mut text = expand_env(value, lookup, &mut out.unset);
    for word in KEYWORDS {
        if text.contains(word) {
            let v = lookup(word).ok_or_else(|| SubstError::NoKeyword(word.to_string()))?;
            text = text.replace(word, &v);
            out.keywords.push((word.to_string(), v));
        }
    }
    let t = text.trim();
    if !out.keywords.is_empty() && t.contains(['+', '-', '*', '/']) {
        // fio's bc step: the whole value is the expression.
        text = eval(t)?.to_string();
        out.evaluated = true;
    } else if t.starts_with('(') && t.ends_with(')') {
        let n = eval(t)?;
        text = if is_time {
            format!("{n}us")
        } else {
            n.to_string()
        };
        out.evaluated = true;
    }
    out.value = text;
    Ok(out)
}

/// `${VAR}` → the variable's value, or nothing when unset (fio's rule). A `${` with
/// no `}` after it, or `${}`, is left as written, as fio leaves it.
fn expand_env(line: &str, lookup: SubstLookup<'_>, unset: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(pos) = rest.find("${") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 2..];
        match after.find('}') {
            Some(end) if end > 0 => {
                let name = &after[..end];
                match lookup(name) {
                    Some(v) => out.push_str(&v),
                    None => unset.push(name.to_string()),
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Evaluates integer arithmetic as `bc` does with its default scale of 0: `+ - * / %`
/// and `^` (a power, right-associative, binding tighter than `*`), unary minus,
/// parentheses; division truncates toward zero.
pub fn eval(expr: &str) -> Result<i64, SubstError> {
    let bad = |why: ArithError| SubstError::Arithmetic {
        expr: expr.to_string(),
        why,
    };
    let tokens: Vec<char> = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Parser { t: &tokens, i: 0 };
    let v = p.sum().map_err(bad)?;
    if p.i != tokens.len() {
        return Err(bad(ArithError::Unexpected(tokens[p.i])));
    }
    Ok(v)
}

struct Parser<'a> {
    t: &'a [char],
    i: usize,
}

type Eval = Result<i64, ArithError>;

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.t.get(self.i).copied()
    }
    fn sum(&mut self) -> Eval {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if op == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or(ArithError::Overflow)?;
        }
        Ok(v)
    }
    fn product(&mut self) -> Eval {
        let mut v = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.i += 1;
            let r = self.power()?;
            v = match op {
                '*' => v.checked_mul(r).ok_or(ArithError::Overflow)?,
                _ if r == 0 => return Err(ArithError::DivisionByZero),
                '/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }
    fn power(&mut self) -> Eval {
        let base = self.unary()?;
        if self.peek() == Some('^') {
            self.i += 1;
            let exp = self.power()?;
            let exp = u32::try_from(exp).map_err(|_| ArithError::Exponent)?;
            return base.checked_pow(exp).ok_or(ArithError::Overflow);
        }
        Ok(base)
    }
    fn unary(&mut self) -> Eval {
        match self.peek() {
            Some('-') => {
                self.i += 1;
                Ok(-self.unary()?)
            }
            Some('(') => {
                self.i += 1;
                let v = self.sum()?;
                if self.peek() != Some(')') {
                    return Err(ArithError::Unclosed);
                }
                self.i += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.i;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                let digits: String = self.t[start..self.i].iter().collect();
                digits.parse::<i64>().map_err(ArithError::Number)
            }
            Some(c) => Err(ArithError::Unexpected(c)),
            None => Err(ArithError::TooShort),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        match name {
            "SET" => Some("16k".into()),
            "$pagesize" => Some("4096".into()),
            "$mb_memory" => Some("16000".into()),
            "$ncpus" => Some("2".into()),
            _ => None,
        }
    }

    fn sub(v: &str) -> Substituted {
        substitute(v, &lookup, false).unwrap()
    }

    #[test]
    fn env_variables_are_replaced_and_unset_ones_become_empty() {
        let s = sub("${SET}");
        assert_eq!(s.value, "16k");
        assert!(s.unset.is_empty());
        let s = sub("/mnt/${NOPE}/f.${SET}");
        assert_eq!(s.value, "/mnt//f.16k");
        assert_eq!(s.unset, vec!["NOPE".to_string()]);
        // fio leaves an unterminated or empty reference as written.
        assert_eq!(sub("a${b").value, "a${b");
        assert_eq!(sub("a${}b").value, "a${}b");
    }

    #[test]
    fn keywords_are_replaced_and_their_arithmetic_evaluated_as_bc_does() {
        assert_eq!(sub("$pagesize").value, "4096");
        assert!(!sub("$pagesize").evaluated);
        assert_eq!(sub("8*1024*$pagesize").value, (8 * 1024 * 4096).to_string());
        // page_fault.fio: 5/8 of the memory in KiB·1024, integer division last.
        assert_eq!(
            sub("5*1024*1024*$mb_memory/8").value,
            (5i64 * 1024 * 1024 * 16000 / 8).to_string()
        );
        assert_eq!(sub("$ncpus").value, "2");
        assert_eq!(sub("$ncpus").keywords, vec![("$ncpus".into(), "2".into())]);
    }

    #[test]
    fn parenthesised_expressions_are_evaluated_with_microseconds_for_times() {
        assert_eq!(sub("(3*1024)").value, "3072");
        assert_eq!(
            substitute("(2*500000)", &lookup, true).unwrap().value,
            "1000000us"
        );
        // Not in parentheses, and no keyword: left for the option's own parser.
        assert_eq!(sub("4k-8k").value, "4k-8k");
    }

    #[test]
    fn bc_precedence_and_truncation() {
        assert_eq!(eval("2+3*4").unwrap(), 14);
        assert_eq!(eval("(2+3)*4").unwrap(), 20);
        assert_eq!(eval("7/2").unwrap(), 3);
        assert_eq!(eval("-7/2").unwrap(), -3);
        assert_eq!(eval("2^3^2").unwrap(), 512);
        assert_eq!(eval("2*3^2").unwrap(), 18);
        assert_eq!(eval("10%4").unwrap(), 2);
        let why = |e: &str| match eval(e) {
            Err(SubstError::Arithmetic { why, .. }) => why,
            other => panic!("{e}: {other:?}"),
        };
        assert_eq!(why("1/0"), ArithError::DivisionByZero);
        assert_eq!(why("(1+2"), ArithError::Unclosed);
        assert_eq!(why("4k*2"), ArithError::Unexpected('k'));
        assert_eq!(why("9223372036854775807*2"), ArithError::Overflow);
        assert_eq!(why("2^-1"), ArithError::Exponent);
        assert_eq!(why("1+"), ArithError::TooShort);
        assert_eq!(
            eval("1/0").unwrap_err().to_string(),
            "'1/0' is not an arithmetic expression fio can evaluate: division by zero"
        );
    }

    #[test]
    fn this_machine_has_every_keyword() {
        for w in KEYWORDS {
            let v = machine_keyword(w).unwrap_or_else(|| panic!("{w}"));
            assert!(v.parse::<u64>().unwrap() > 0, "{w}={v}");
        }
    }

    // fio 3.33 itself: `--bs=8KiB` made 131 reads of 8000 bytes of a 1m file;
    // `--size=100Gi` is 100 GiB; with `kb_base=1000` `8k` is 8000 and `8KiB` 8192.
    #[test]
    fn units_fio_reads_otherwise_are_given_in_bytes() {
        let f = |v: &str, kb: u64| fio_units(v, kb);
        assert_eq!(f("8KiB", 1024).as_deref(), Some("8000"));
        assert_eq!(f("8kib", 1024).as_deref(), Some("8000"));
        assert_eq!(f("10GiB", 1024).as_deref(), Some("10000000000"));
        assert_eq!(f("100Gi", 1024).as_deref(), Some("107374182400"));
        assert_eq!(f("4k/50:8KiB/50", 1024).as_deref(), Some("4k/50:8000/50"));
        for same in [
            "4k",
            "8KB",
            "1m",
            "17m",
            "50%",
            "read:17m",
            "/data/8KiB_file",
            "1.5GiB",
            "250ms",
        ] {
            assert_eq!(f(same, 1024), None, "{same}");
        }
        assert_eq!(f("8k", 1000).as_deref(), Some("8000"));
        assert_eq!(f("4k-64k", 1000).as_deref(), Some("4000-64000"));
        assert_eq!(f("read:-8k", 1000).as_deref(), Some("read:-8000"));
        assert_eq!(f("64KiB", 1000), None, "1024-based, as ioscope reads it");
    }
}
