//! What ioscope knows about each diskspd and SQLIO switch, in one table per tool: the
//! switch letter (case matters: diskspd's `-s` and `-S` differ), how the
//! documentation writes it, and what the translation does with it (maps it, accepts
//! it without effect and why, lists it as unsupported, or refuses the line). The
//! readers in [`super::diskspd`] look every switch up here first, so a switch missing
//! from the table is unknown (an error, as both tools refuse one), and only switches
//! the table maps reach their own code. docs/compat-diskspd.md and docs/compat-sqlio.md
//! carry the same tables; unit tests hold the readers and the documentation against
//! these.

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

/// diskspd's switches (2.x, every one its parser takes).
pub static DISKSPD: &[Switch] = &[
    sw("b", "-b<size>", Maps("block size (default 64K); the unit of `b` sizes")),
    sw("d", "-d<s>", Maps("measured time (default 10 s)")),
    sw("W", "-W<s>", Maps("warm-up (default 5 s)")),
    sw(
        "C",
        "-C<s>",
        Maps("cool-down: load after measuring ends, for other instances; this run stops at the end of its measured time (said)"),
    ),
    sw("o", "-o<n>", Maps("outstanding I/Os per thread per target → queue depth (default 2)")),
    sw("t", "-t<n>", Maps("threads per target → streams per target, one worker each (default 1)")),
    sw("F", "-F<n>", Maps("threads shared by all targets → n streams per target, n workers, each worker one stream of every target")),
    sw("r", "-r[align]", Maps("random at the alignment (default the block size); -rs<pct> mixes in sequential I/O (random_pct); -rdpct/-rdabs → hot bands")),
    sw("s", "-s[i][stride]", Maps("sequential at the stride: threads overlap from the start (-T apart), or share one offset (-si)")),
    sw("T", "-T<offset>", Maps("sequential threads start this far apart, each walking the whole target")),
    sw("p", "-p", Maps("each outstanding I/O of a sequential thread walks on its own from the same start")),
    sw("w", "-w<pct>", Maps("write percentage (default 0)")),
    sw("S", "-S[bhmruw]", Maps("u (and bare -S) O_DIRECT, w write-through, h both, b cached; m, r listed")),
    sw("h", "-h", Maps("old spelling of -Sh: O_DIRECT and write-through")),
    sw("c", "-c<size>", Maps("target (creation) size")),
    sw("f", "-f<size>", Maps("working-set end; -f<rst> Windows open hints accepted (said)")),
    sw("B", "-B<base>[:length]", Maps("working-set start (and length)")),
    sw("g", "-g<bytes/ms>[i]", Maps("per-thread, per-target throttle → the workload's IOPS, evenly spaced (said)")),
    sw("i", "-i<count>", Maps("I/Os per burst, shared by a target's threads (with -j)")),
    sw("j", "-j<ms>", Maps("pause after each burst → think time")),
    sw("a", "-a[g#,]#[,#…]", Maps("CPUs the threads go round-robin over; group 0 only")),
    sw("n", "-n", Maps("no CPU pinning (diskspd pins round-robin by default; said)")),
    sw("R", "-R[p]text|xml", Maps("-Rxml: diskspd's XML result on stdout; -Rp: the translation, nothing run")),
    sw("D", "-D[ms]", Maps("interval length (default 1000 ms)")),
    sw("z", "-z[seed]", Maps("seed (without -z diskspd's seed is 0; bare -z the clock's, said)")),
    sw("Z", "-Z[r|size[,file]]", Maps("write content: 0..255 repeated by default, zeros, fresh random bytes; a file's content listed")),
    sw(
        "L",
        "-L",
        NoEffectWhen {
            accepts: is_bare,
            why: "-L, latency statistics, which ioscope always measures",
        },
    ),
    sw("v", "-v[s]", NoEffect("verbose output; changes nothing measured")),
    sw("P", "-P<count>", NoEffect("progress dots; changes nothing measured")),
    sw(":", "-:<flags>", NoEffect("experimental throttle sleeps of diskspd's own pacing")),
    sw(
        "x",
        "-x",
        NoEffect("how Windows delivers completions (routines or ports); ioscope's engine completes I/O its own way either way"),
    ),
    sw("O", "-O<n>", Unsupported("outstanding I/Os per thread across targets (with -F)")),
    sw("l", "-l", Unsupported("large pages for the I/O buffers")),
    sw(
        "I",
        "-I<1-3>",
        NoEffectWhen {
            accepts: |v| v == Some("3"),
            why: "-I3, the normal I/O priority",
        },
    ),
    sw("N", "-N<vni>", Unsupported("flush mode of memory-mapped I/O")),
    sw("e", "-e…", Unsupported("Windows event tracing")),
    sw("y", "-y…", Unsupported("synchronisation through Windows events")),
    sw(
        "X",
        "-X<profile.xml>",
        Maps("an XML profile: each element is read as the switch the profile table below names; with it diskspd takes only -d -W -C -z -R -v -: and paths for template targets (*1, *2, …)"),
    ),
    sw("?", "-?", Refused("-? prints diskspd's usage; there is nothing to run")),
];

/// Where an element of a diskspd XML profile stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `<Profile>` itself.
    Profile,
    /// `<Profile><TimeSpans><TimeSpan>`.
    TimeSpan,
    /// `<TimeSpan><Targets><Target>`.
    Target,
}

/// How an element of a diskspd XML profile reaches the switch model: the switch it
/// stands for, whose row in [`DISKSPD`] says what the translation does with it, or
/// (for the few elements no switch spells) its own effect.
#[derive(Debug, Clone, Copy)]
pub enum Via {
    /// `-<prefix><number>`; the element holds a whole number (`<Duration>60` → `-d60`).
    Number(&'static str),
    /// As [`Via::Number`], but 0 is diskspd's default and writes no switch.
    NonZero(&'static str),
    /// A boolean: `true` is this switch, `false` diskspd's default (no switch).
    Flag(&'static str),
    /// One of a few words, each its switch.
    Choice(&'static [(&'static str, &'static str)]),
    /// An element with children or attributes, read by its own code into the switch
    /// `form` (the profile reader's `nested`).
    Nested(&'static str),
    /// No switch: what the translation does with the element.
    Own(Effect),
}

/// One element of diskspd's profile schema (diskspd.xsd).
#[derive(Debug, Clone, Copy)]
pub struct Element {
    pub name: &'static str,
    pub scope: Scope,
    pub via: Via,
}

const fn el(name: &'static str, scope: Scope, via: Via) -> Element {
    Element { name, scope, via }
}

use Scope::{Profile as P, Target as G, TimeSpan as T};
use Via::{Choice, Flag, Nested, NonZero, Number, Own};

/// Every element diskspd's profile reader takes (2.x), each mapped onto its switch.
pub static DISKSPD_XML: &[Element] = &[
    el("Progress", P, Number("P")),
    el(
        "ResultFormat",
        P,
        Choice(&[("text", "-Rtext"), ("xml", "-Rxml")]),
    ),
    el("Verbose", P, Flag("-v")),
    el("VerboseStats", P, Flag("-vs")),
    el("ExperimentFlags", P, Number(":")),
    el("ETW", P, Nested("-e")),
    el(
        "PrecreateFiles",
        P,
        Own(Unsupported(
            "creating every time span's files before the first one runs",
        )),
    ),
    el("TimeSpans", P, Nested("one run per <TimeSpan>")),
    el("Duration", T, Number("d")),
    el("Warmup", T, Number("W")),
    el("Cooldown", T, Number("C")),
    el("RandSeed", T, Number("z")),
    el("RandomWriteData", T, Flag("-Zr")),
    el("ThreadCount", T, NonZero("F")),
    el("RequestCount", T, NonZero("O")),
    el("GroupAffinity", T, Flag("-ag")),
    el("Affinity", T, Nested("-a")),
    el("DisableAffinity", T, Flag("-n")),
    el("CompletionRoutines", T, Flag("-x")),
    el("MeasureLatency", T, Flag("-L")),
    el("CalculateIopsStdDev", T, Flag("-D")),
    el("IoBucketDuration", T, Number("D")),
    el("Targets", T, Nested("one workload per <Target>")),
    el("Path", G, Nested("the target")),
    el("BlockSize", G, Number("b")),
    el("StrideSize", G, Nested("-s")),
    el("InterlockedSequential", G, Nested("-si")),
    el("BaseFileOffset", G, NonZero("B")),
    el("SequentialScan", G, Flag("-fs")),
    el("RandomAccess", G, Flag("-fr")),
    el("TemporaryFile", G, Flag("-ft")),
    el("UseLargePages", G, Flag("-l")),
    el("RequestCount", G, Number("o")),
    el("Random", G, Number("r")),
    el("RandomRatio", G, Number("rs")),
    el("Distribution", G, Nested("-rd")),
    el("DisableAllCache", G, Flag("-Sh")),
    el("DisableLocalCache", G, Flag("-Sr")),
    el("DisableOSCache", G, Flag("-Su")),
    el("WriteThrough", G, Flag("-Sw")),
    el("MemoryMappedIo", G, Flag("-Sm")),
    el(
        "FlushType",
        G,
        Choice(&[
            ("ViewOfFile", "-Nv"),
            ("NonVolatileMemory", "-Nn"),
            ("NonVolatileMemoryNoDrain", "-Ni"),
        ]),
    ),
    el("WriteBufferContent", G, Nested("-Z")),
    el("BurstSize", G, NonZero("i")),
    el("ThinkTime", G, NonZero("j")),
    el("Throughput", G, Nested("-g")),
    el("ThreadsPerFile", G, Number("t")),
    el("FileSize", G, NonZero("c")),
    el("MaxFileSize", G, NonZero("f")),
    el("WriteRatio", G, Number("w")),
    el("ParallelAsyncIO", G, Flag("-p")),
    el("ThreadStride", G, NonZero("T")),
    el("IOPriority", G, Number("I")),
    el(
        "Weight",
        G,
        Own(Unsupported(
            "a target's share of a -F thread's I/Os (weights)",
        )),
    ),
    el(
        "ThreadTargets",
        G,
        Own(Unsupported(
            "which -F threads issue to a target, with weights",
        )),
    ),
];

/// The element `name` in `scope`.
pub fn element(scope: Scope, name: &str) -> Option<&'static Element> {
    DISKSPD_XML
        .iter()
        .find(|e| e.scope == scope && e.name == name)
}

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
        for (doc, table) in [
            (include_str!("../../../docs/compat-diskspd.md"), DISKSPD),
            (include_str!("../../../docs/compat-sqlio.md"), SQLIO),
        ] {
            // A `|` in a form is `\|` in a Markdown table.
            let doc = doc.replace("\\|", "|");
            for s in table {
                assert!(
                    doc.contains(&format!("| `{}` |", s.form)),
                    "the compat page has no row for `{}`",
                    s.form
                );
            }
        }
    }
}
