//! The ranks' word before something they must all do together (the checks of a
//! plan, the start of a run): each rank says "ready", with what it will run, or why
//! it cannot; rank 0 decides for all, so one rank's missing engine or library, a
//! target it cannot open, or an engine that differs from its peers' fails the run on
//! every rank alike, naming the rank and host, before any I/O. No MPI here: the
//! transport (session.rs) carries the encoded votes and decisions.

use std::fmt;

/// What the ranks are about to do together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The checks of a plan, before anything is created.
    Checks,
    /// The start of a run.
    Start,
}

impl Step {
    fn code(self) -> u8 {
        match self {
            Step::Checks => b'C',
            Step::Start => b'S',
        }
    }

    fn from_code(c: u8) -> Option<Step> {
        match c {
            b'C' => Some(Step::Checks),
            b'S' => Some(Step::Start),
            _ => None,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::Checks => "checks",
            Step::Start => "start",
        })
    }
}

/// One thing rank 0 found wrong with the votes, naming the rank ("rank r on host h").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The rank refused, for the reason it sent (text: it crossed the wire).
    #[error("{rank}: {why}")]
    Refused { rank: String, why: String },
    /// The rank would run another engine than the first rank of its group.
    #[error(
        "{rank} would run engine {engine}, {first} runs {first_engine}: the engines \
         available differ between the hosts"
    )]
    EngineDiffers {
        rank: String,
        engine: String,
        first: String,
        first_engine: String,
    },
}

/// Everything rank 0 found wrong with the votes (at least one problem).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", join(.0))]
pub struct Disagreement(pub Vec<Problem>);

fn join(problems: &[Problem]) -> String {
    let all: Vec<String> = problems.iter().map(Problem::to_string).collect();
    all.join("; ")
}

/// Rank 0's decision to stop the ranks before `step`; `why` is its finding (the
/// [`Disagreement`], or the ranks that did not vote in time), text once on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{step}: {why}")]
pub struct Stop {
    pub step: Step,
    pub why: String,
}

/// Why the ranks do not go on, as every rank learns it from rank 0's decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecisionError {
    #[error(transparent)]
    Stopped(#[from] Stop),
    #[error("rank 0 sent a malformed start")]
    MalformedStart,
    #[error("rank 0 sent a malformed decision")]
    MalformedDecision,
}

/// One rank's vote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Vote {
    /// Ready. `group` names the ranks that must agree (the host definition the rank
    /// plays, or empty); `engine` is what it will run ("" when not yet known).
    Ready { group: String, engine: String },
    /// Cannot go on, and why.
    Refuse(String),
}

impl Vote {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Vote::Ready { group, engine } => format!("R{group}\n{engine}").into_bytes(),
            Vote::Refuse(why) => format!("E{why}").into_bytes(),
        }
    }

    pub fn decode(bytes: &[u8]) -> Option<Vote> {
        let text = std::str::from_utf8(bytes).ok()?;
        match text.split_at_checked(1)? {
            ("R", rest) => {
                let (group, engine) = rest.split_once('\n')?;
                Some(Vote::Ready {
                    group: group.into(),
                    engine: engine.into(),
                })
            }
            ("E", why) => Some(Vote::Refuse(why.into())),
            _ => None,
        }
    }
}

/// Rank 0's decision over every rank's vote (`name(r)` = "rank r on host h"): `Ok`
/// when all are ready and ranks of one group run one engine, else what is wrong.
pub fn decide(votes: &[Vote], name: impl Fn(u32) -> String) -> Result<(), Disagreement> {
    let mut problems = Vec::new();
    for (r, v) in votes.iter().enumerate() {
        match v {
            Vote::Refuse(why) => problems.push(Problem::Refused {
                rank: name(r as u32),
                why: why.clone(),
            }),
            Vote::Ready { group, engine } => {
                // The first ready rank of the same group sets the engine.
                let first = votes[..r].iter().enumerate().find_map(|(q, o)| match o {
                    Vote::Ready {
                        group: g,
                        engine: e,
                    } if g == group => Some((q, e)),
                    _ => None,
                });
                if let Some((q, e)) = first {
                    if e != engine {
                        problems.push(Problem::EngineDiffers {
                            rank: name(r as u32),
                            engine: engine.clone(),
                            first: name(q as u32),
                            first_engine: e.clone(),
                        });
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Disagreement(problems))
    }
}

/// Rank 0's answer: go at `origin_unix_ns` (`G` + 8 bytes), or stop before a step
/// with a reason (`S` + the step's letter + the reason's text).
pub fn encode_decision(d: &Result<u64, Stop>) -> Vec<u8> {
    match d {
        Ok(origin) => {
            let mut out = vec![b'G'];
            out.extend_from_slice(&origin.to_le_bytes());
            out
        }
        Err(Stop { step, why }) => {
            let mut out = vec![b'S', step.code()];
            out.extend_from_slice(why.as_bytes());
            out
        }
    }
}

/// Decodes rank 0's answer; garbage is a stop.
pub fn decode_decision(bytes: &[u8]) -> Result<u64, DecisionError> {
    match bytes.split_first() {
        Some((b'G', rest)) => rest
            .try_into()
            .map(u64::from_le_bytes)
            .map_err(|_| DecisionError::MalformedStart),
        Some((b'S', rest)) => match rest.split_first() {
            Some((&c, why)) => Err(DecisionError::Stopped(Stop {
                step: Step::from_code(c).ok_or(DecisionError::MalformedDecision)?,
                why: String::from_utf8_lossy(why).into_owned(),
            })),
            None => Err(DecisionError::MalformedDecision),
        },
        _ => Err(DecisionError::MalformedDecision),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(r: u32) -> String {
        format!("rank {r} on host n{r}")
    }

    fn ready(group: &str, engine: &str) -> Vote {
        Vote::Ready {
            group: group.into(),
            engine: engine.into(),
        }
    }

    #[test]
    fn one_refusal_or_a_differing_engine_stops_everyone_naming_the_rank() {
        assert_eq!(
            decide(&[ready("", "uring"), ready("", "uring")], name),
            Ok(())
        );
        let err = decide(
            &[
                ready("", "uring"),
                Vote::Refuse("libnbd.so.0 cannot be loaded".into()),
            ],
            name,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "rank 1 on host n1: libnbd.so.0 cannot be loaded"
        );
        let err = decide(&[ready("", "uring"), ready("", "sync")], name)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "rank 1 on host n1 would run engine sync, rank 0 on host n0 runs uring"
            ),
            "{err}"
        );
        // Ranks playing different host definitions drive different targets: their
        // engines may differ.
        assert_eq!(
            decide(&[ready("h1", "uring"), ready("h2", "sync")], name),
            Ok(())
        );
    }

    #[test]
    fn votes_and_decisions_round_trip() {
        for v in [
            ready("h1", "uring"),
            ready("", ""),
            Vote::Refuse("x\ny".into()),
        ] {
            assert_eq!(Vote::decode(&v.encode()), Some(v));
        }
        assert_eq!(Vote::decode(b"Zx"), None);
        assert_eq!(decode_decision(&encode_decision(&Ok(42))), Ok(42));
        let stop = Stop {
            step: Step::Checks,
            why: "rank 2 on host c: no engine".to_string(),
        };
        assert_eq!(
            decode_decision(&encode_decision(&Err(stop.clone()))),
            Err(DecisionError::Stopped(stop.clone()))
        );
        assert_eq!(stop.to_string(), "checks: rank 2 on host c: no engine");
        assert_eq!(decode_decision(b"G12"), Err(DecisionError::MalformedStart));
        assert_eq!(
            decode_decision(b"SXwhy"),
            Err(DecisionError::MalformedDecision)
        );
    }
}
