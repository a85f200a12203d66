//! Which file of a file set a workload's next I/O goes to (fio's
//! `file_service_type`). A workload on a `files:` target read and written as bytes
//! spreads its I/O over the set's files by this policy; the offset inside the chosen
//! file still follows the workload's own pattern and distribution. Written in fio's
//! words (`roundrobin:4`, `zipf:1.2`) in every front end, so a job file and its
//! conversion say the same thing.

/// How the next file is chosen.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum FileService {
    /// Each file in turn, moving on after `ios` I/Os (fio's default, `roundrobin`).
    RoundRobin { ios: u32 },
    /// All of one file's share of a pass, then the next (`sequential`).
    Sequential,
    /// A file drawn uniformly, kept for `ios` I/Os (`random`).
    Random { ios: u32 },
    /// A file drawn from a Zipf distribution of exponent `theta` (`zipf:θ`).
    Zipf { theta: f64 },
    /// A file drawn from a Pareto distribution of shape `h` (`pareto:h`).
    Pareto { h: f64 },
    /// A file drawn from a normal distribution around the middle file, widened by
    /// `dev_pct` percent of the set (`normal:σ`, fio's alias `gauss`).
    Normal { dev_pct: f64 },
    /// vdbench's `fileselect=poisson` (`midpoint=M`): file ⌊−ln(U) × n / M⌋ mod n,
    /// an exponential draw whose mean is the file n / M, kept for `ios` I/Os
    /// (`exponential:M[:N]`).
    Exponential { midpoint: f64, ios: u32 },
}

impl Default for FileService {
    /// fio's default: round robin, one I/O per file.
    fn default() -> Self {
        FileService::RoundRobin { ios: 1 }
    }
}

impl From<FileService> for String {
    fn from(f: FileService) -> String {
        f.text()
    }
}

impl TryFrom<String> for FileService {
    type Error = String;
    fn try_from(s: String) -> Result<FileService, String> {
        FileService::parse(&s)
    }
}

impl FileService {
    /// Round robin switching after every I/O, fio's default.
    pub fn is_default(&self) -> bool {
        *self == FileService::default()
    }

    /// Reads fio's spelling: `roundrobin[:N]`, `sequential`, `random[:N]`,
    /// `zipf[:θ]`, `pareto[:h]`, `normal[:σ]` / `gauss[:σ]`. The defaults of the
    /// skewed ones are fio's (θ 1.2, h 0.5, σ 0).
    pub fn parse(s: &str) -> Result<FileService, String> {
        let s = s.trim();
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a.trim())),
            None => (s, None),
        };
        let ios = |arg: Option<&str>| -> Result<u32, String> {
            match arg {
                None => Ok(1),
                Some(a) => a
                    .parse::<u32>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("'{a}': expected a number of I/Os (1 or more)")),
            }
        };
        let real = |arg: Option<&str>, default: f64| -> Result<f64, String> {
            match arg {
                None => Ok(default),
                Some(a) if a.contains(':') || a.contains(',') => Err(format!(
                    "'{a}': a distribution's centre is not supported; give one number"
                )),
                Some(a) => a
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("'{a}': expected a number")),
            }
        };
        match name {
            "roundrobin" => Ok(FileService::RoundRobin { ios: ios(arg)? }),
            "random" => Ok(FileService::Random { ios: ios(arg)? }),
            // fio reads a count after `sequential` too, and never uses it.
            "sequential" => ios(arg).map(|_| FileService::Sequential),
            "zipf" => match real(arg, 1.2)? {
                t if t > 0.0 && t != 1.0 => Ok(FileService::Zipf { theta: t }),
                t => Err(format!("zipf:{t}: θ must be above 0 and not 1")),
            },
            "pareto" => match real(arg, 0.5)? {
                h if h > 0.0 && h < 1.0 => Ok(FileService::Pareto { h }),
                h => Err(format!("pareto:{h}: h must be between 0 and 1")),
            },
            "exponential" => {
                let (m, n) = match arg.map(|a| a.split_once(':')) {
                    Some(Some((m, n))) => (Some(m), Some(n)),
                    _ => (arg, None),
                };
                match real(m, 3.0)? {
                    midpoint if midpoint > 0.0 => Ok(FileService::Exponential {
                        midpoint,
                        ios: ios(n)?,
                    }),
                    m => Err(format!("exponential:{m}: the midpoint must be above 0")),
                }
            }
            "normal" | "gauss" => match real(arg, 0.0)? {
                d if (0.0..=100.0).contains(&d) => Ok(FileService::Normal { dev_pct: d }),
                d => Err(format!("{name}:{d}: σ is a percentage from 0 to 100")),
            },
            other => Err(format!(
                "'{other}': expected roundrobin[:N], sequential, random[:N], zipf[:θ], \
                 pareto[:h], normal[:σ] or exponential[:M[:N]]"
            )),
        }
    }

    /// The text [`FileService::parse`] reads back (fio's spelling).
    pub fn text(&self) -> String {
        match *self {
            FileService::RoundRobin { ios: 1 } => "roundrobin".into(),
            FileService::RoundRobin { ios } => format!("roundrobin:{ios}"),
            FileService::Sequential => "sequential".into(),
            FileService::Random { ios: 1 } => "random".into(),
            FileService::Random { ios } => format!("random:{ios}"),
            FileService::Zipf { theta } => format!("zipf:{theta}"),
            FileService::Pareto { h } => format!("pareto:{h}"),
            FileService::Normal { dev_pct } => format!("normal:{dev_pct}"),
            FileService::Exponential { midpoint, ios: 1 } => format!("exponential:{midpoint}"),
            FileService::Exponential { midpoint, ios } => format!("exponential:{midpoint}:{ios}"),
        }
    }

    /// Whether files are drawn from a skewed distribution, which never finishes a
    /// file (fio restarts a file's region when it is used up, rather than moving on).
    pub fn is_skewed(&self) -> bool {
        matches!(
            self,
            FileService::Zipf { .. }
                | FileService::Pareto { .. }
                | FileService::Normal { .. }
                | FileService::Exponential { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fios_spellings_and_writes_them_back() {
        for (given, want) in [
            ("roundrobin", FileService::RoundRobin { ios: 1 }),
            ("roundrobin:4", FileService::RoundRobin { ios: 4 }),
            ("sequential", FileService::Sequential),
            ("random:8", FileService::Random { ios: 8 }),
            (
                "exponential:5:32",
                FileService::Exponential {
                    midpoint: 5.0,
                    ios: 32,
                },
            ),
            (
                "exponential:3",
                FileService::Exponential {
                    midpoint: 3.0,
                    ios: 1,
                },
            ),
            ("zipf:1.1", FileService::Zipf { theta: 1.1 }),
            ("pareto", FileService::Pareto { h: 0.5 }),
            ("gauss:5", FileService::Normal { dev_pct: 5.0 }),
        ] {
            let got = FileService::parse(given).unwrap();
            assert_eq!(got, want, "{given}");
            assert_eq!(FileService::parse(&got.text()).unwrap(), want);
        }
        assert!(FileService::default().is_default());
        assert_eq!(FileService::default().text(), "roundrobin");
    }

    #[test]
    fn refuses_what_fio_refuses() {
        for bad in [
            "zipf:1",
            "pareto:1.5",
            "random:0",
            "lru",
            "normal:200",
            "zipf:1.2:0.3",
        ] {
            assert!(FileService::parse(bad).is_err(), "{bad}");
        }
    }
}
