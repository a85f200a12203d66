//! What ioscope knows about each diskspd and SQLIO switch, in one table per tool: the
//! switch letter (case matters: diskspd's `-s` and `-S` differ), how the
//! documentation writes it, and what the translation does with it (maps it, accepts
//! it without effect and why, lists it as unsupported, or refuses the line). The
//! readers in [`super::diskspd`] look every switch up here first, so a switch missing
//! from the table is unknown (an error, as both tools refuse one), and only switches
//! the table maps reach their own code. docs/compat-vdbench.md carries the same
//! tables; unit tests hold the readers and the documentation against these.

pub use super::fio_options::Effect;

/// One switch: `-` and a letter, then its value written against it (`-b8K`).
#[derive(Debug, Clone, Copy)]
pub struct Switch {
    /// The letter after `-`.
    pub letter: &'static str,
    /// How the documentation writes it (`-b<size>`).
    pub form: &'static str,
    pub effect: Effect,
}

const fn sw(letter: &'static str, form: &'static str, effect: Effect) -> Switch {
    Switch {
        letter,
        form,
        effect,
    }
}

use Effect::{Maps, NoEffect, NoEffectWhen, Refused, Unsupported};

fn is_bare(v: Option<&str>) -> bool {
    v.map_or(true, str::is_empty)
}

fn is_latency_letter(v: Option<&str>) -> bool {
    matches!(
        v.unwrap_or("").to_ascii_uppercase().as_str(),
        "" | "S" | "P" | "SI" | "PI"
    )
}

fn is_hundred(v: Option<&str>) -> bool {
    v == Some("100")
}

/// diskspd's switches.
pub static DISKSPD: &[Switch] = &[
    sw("b", "-b<size>", Maps("block size (default 64K)")),
    sw("d", "-d<s>", Maps("duration (default 10 s)")),
    sw("W", "-W<s>", Maps("warm-up (default 5 s)")),
    sw(
        "C",
        "-C<s>",
        Maps("cool-down: 0 accepted, longer listed as unsupported"),
    ),
    sw("o", "-o<n>", Maps("queue depth per thread (default 2)")),
    sw(
        "t",
        "-t<n>",
        Maps("threads per target → streams (default 1)"),
    ),
    sw(
        "r",
        "-r[align]",
        Maps("random; other alignments and -rs listed"),
    ),
    sw(
        "s",
        "-s[stride]",
        Maps("sequential; -si interlocked; other strides listed"),
    ),
    sw("w", "-w<pct>", Maps("write percentage (default 0)")),
    sw(
        "S",
        "-S",
        Maps("cache letters → O_DIRECT and write-through"),
    ),
    sw(
        "h",
        "-h",
        Maps("old spelling of -Sh: O_DIRECT and write-through"),
    ),
    sw("c", "-c<size>", Maps("target (creation) size")),
    sw(
        "f",
        "-f<size>",
        Maps("working-set end; access hints listed"),
    ),
    sw("B", "-B<offset>", Maps("working-set start")),
    sw("g", "-g<bytes/ms>", Maps("per-thread throttle → IOPS")),
    sw("a", "-a#,#,…", Maps("CPU set; processor groups listed")),
    sw("n", "-n", Maps("no CPU pinning")),
    sw("R", "-R", Maps("text output accepted; -Rxml listed")),
    sw("D", "-D<ms>", Maps("interval length")),
    sw("z", "-z[seed]", Maps("seed")),
    sw(
        "L",
        "-L",
        NoEffectWhen {
            accepts: is_bare,
            why: "-L, latency statistics, which ioscope always measures",
        },
    ),
    sw(
        "v",
        "-v",
        NoEffect("verbose output; changes nothing measured"),
    ),
    sw(
        "P",
        "-P",
        NoEffect("progress dots; changes nothing measured"),
    ),
    sw(
        "F",
        "-F<n>",
        Unsupported("total threads shared by all targets"),
    ),
    sw(
        "O",
        "-O",
        Unsupported("outstanding I/Os per thread across targets (with -F)"),
    ),
    sw("T", "-T<offset>", Unsupported("stride between threads")),
    sw("Z", "-Z", Unsupported("write buffer content")),
    sw(
        "x",
        "-x",
        Unsupported("completion routines instead of completion ports"),
    ),
    sw("l", "-l", Unsupported("large pages for the I/O buffers")),
    sw("p", "-p", Unsupported("parallel I/Os at the same offset")),
    sw("i", "-i", Unsupported("I/O bursts")),
    sw("j", "-j", Unsupported("the pause between I/O bursts")),
    sw("I", "-I", Unsupported("I/O priority")),
    sw("N", "-N", Unsupported("flush mode of memory-mapped I/O")),
    sw("e", "-e…", Unsupported("Windows event tracing")),
    sw(
        "y",
        "-y",
        Unsupported("synchronisation through Windows events"),
    ),
    sw(
        "u",
        "-u",
        Unsupported("a diskspd switch ioscope does not reproduce"),
    ),
    sw(
        "U",
        "-U",
        Unsupported("a diskspd switch ioscope does not reproduce"),
    ),
    sw(
        "X",
        "-X<profile.xml>",
        Refused("XML profiles (-X) are not supported; write the options on the command line"),
    ),
];

/// SQLIO's switches.
pub static SQLIO: &[Switch] = &[
    sw("k", "-kR", Maps("R reads, W writes")),
    sw("s", "-s<s>", Maps("duration")),
    sw("t", "-t<n>", Maps("streams per file")),
    sw("o", "-o<n>", Maps("queue depth per stream")),
    sw("b", "-b<KiB>", Maps("block size in KiB")),
    sw(
        "f",
        "-frandom",
        Maps("random or sequential; a stripe factor listed"),
    ),
    sw(
        "B",
        "-B<letters>",
        Maps("cache letters → O_DIRECT and write-through"),
    ),
    sw("a", "-a<mask>", Maps("hexadecimal CPU mask → CPU set")),
    sw(
        "F",
        "-F<paramfile>",
        Maps("a file of targets: path threads mask size"),
    ),
    sw(
        "L",
        "-LS",
        NoEffectWhen {
            accepts: is_latency_letter,
            why: "-LS or -LP, latency statistics, which ioscope always measures",
        },
    ),
    sw(
        "T",
        "-T<pct>",
        NoEffectWhen {
            accepts: is_hundred,
            why: "-T100: every I/O goes to the target",
        },
    ),
    sw(
        "p",
        "-p",
        Unsupported("affinity to one CPU number; give a mask with -a"),
    ),
    sw(
        "d",
        "-d",
        Unsupported("the same file name on several drive letters"),
    ),
    sw("R", "-R", Unsupported("raw drive letters or numbers")),
    sw("i", "-i", Unsupported("I/Os per run of blocks")),
    sw(
        "m",
        "-m",
        Unsupported("multi-block I/O (copy or scatter/gather)"),
    ),
    sw("S", "-S", Unsupported("a start offset in blocks")),
    sw(
        "v",
        "-v",
        Unsupported("version 1.1.1's reuse of the same blocks"),
    ),
];

/// The row of `letter` in `table`.
pub fn lookup(table: &'static [Switch], letter: &str) -> Option<&'static Switch> {
    table.iter().find(|s| s.letter == letter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_are_unique_and_described() {
        for table in [DISKSPD, SQLIO] {
            let mut seen = std::collections::BTreeSet::new();
            for s in table {
                assert!(seen.insert(s.letter), "-{} appears twice", s.letter);
                assert_eq!(s.letter.chars().count(), 1, "{}", s.letter);
                assert!(s.form.starts_with(&format!("-{}", s.letter)), "{}", s.form);
                assert!(!s.effect.text().is_empty(), "-{} says nothing", s.letter);
            }
        }
    }

    #[test]
    fn the_documentation_names_every_switch() {
        let doc = include_str!("../../../docs/compat-vdbench.md");
        for (tool, table, heading) in [
            ("diskspd", DISKSPD, "## diskspd"),
            ("SQLIO", SQLIO, "## SQLIO"),
        ] {
            let start = doc.find(heading).expect(heading);
            let section = &doc[start..];
            let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
            for s in table {
                assert!(
                    section.contains(&format!("`{}`", s.form)),
                    "docs/compat-vdbench.md's {tool} section does not mention `{}`",
                    s.form
                );
            }
        }
    }
}
