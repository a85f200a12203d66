//! Small text helpers shared by the human-facing reporters (HTML, SVG, Markdown,
//! compare): number formatting for people, HTML escaping and UTC dates. Machine
//! formats (CSV, JSON) do not use these — they keep full precision.

/// Formats a number for a person: thousands separators and no decimals from 1000
/// up, about four significant digits below. Keeps tables narrow without hiding
/// differences that matter at the scale of the value.
pub fn human(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        return thousands(v.round());
    }
    let decimals = if a == 0.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        // Three significant digits for small values (0.0123 → 0.0123).
        let mag = a.log10().floor() as i32; // -1 for 0.5, -2 for 0.05
        ((2 - mag).clamp(1, 9)) as usize
    };
    trim_zeros(format!("{v:.decimals$}"))
}

/// Formats a ratio such as B/A as "8.00×".
pub fn ratio(r: f64) -> String {
    if !r.is_finite() {
        return "–".into();
    }
    if r >= 100.0 {
        format!("{r:.0}×")
    } else if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

/// Inserts thousands separators into an integral value.
fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v.abs());
    let mut out = String::with_capacity(s.len() + s.len() / 3 + 1);
    if v < 0.0 {
        out.push('-');
    }
    let lead = s.len() % 3;
    for (i, c) in s.chars().enumerate() {
        if i != 0 && (i + 3 - lead) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Drops trailing zeros after a decimal point ("12.50" → "12.5", "3.00" → "3").
pub fn trim_zeros(mut s: String) -> String {
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".into();
    }
    s
}

/// A coordinate with one decimal: enough for sub-pixel placement, short enough to
/// keep a 3600-point path small.
pub fn coord(v: f64) -> String {
    trim_zeros(format!("{v:.1}"))
}

/// Escapes text for HTML element content and double-quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Unix seconds as "YYYY-MM-DD HH:MM:SS UTC" (proleptic Gregorian calendar).
pub fn utc_datetime(unix_s: f64) -> String {
    if !unix_s.is_finite() {
        return "unknown".into();
    }
    let secs = unix_s.floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day); Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_numbers() {
        assert_eq!(human(80_000.4), "80,000");
        assert_eq!(human(1234567.0), "1,234,567");
        assert_eq!(human(312.46), "312.5");
        assert_eq!(human(12.0), "12");
        assert_eq!(human(0.0123), "0.0123");
        assert_eq!(human(0.0), "0");
        assert_eq!(human(-1500.0), "-1,500");
    }

    #[test]
    fn dates_and_escaping() {
        assert_eq!(utc_datetime(0.0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_datetime(1_700_000_000.0), "2023-11-14 22:13:20 UTC");
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(coord(12.04), "12");
        assert_eq!(ratio(8.0), "8.00×");
    }
}
