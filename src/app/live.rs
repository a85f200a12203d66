//! The command's live metrics (`--metrics`): one registry for the whole command,
//! served on its endpoint from before the first run until the command ends (the
//! session owns it; `ioscope net serve|run` hold it for their whole command). Under
//! mpirun rank 0 serves the merged view of every rank, fed from the intervals the
//! ranks already send it, and the other ranks serve nothing; with
//! `--metrics-per-rank` each rank serves its own figures instead, on the port plus
//! its rank.

use super::AppError;
use crate::metrics::{Endpoint, Live, MetricsAddr, Phase};
use crate::plan::settings::declared::{METRICS, METRICS_PER_RANK};
use crate::plan::settings::{CommandSettings, Value};

/// A served registry; dropping it closes the endpoint.
pub struct Served {
    pub live: Live,
    _endpoint: Endpoint,
}

impl Served {
    /// Sets a phase gauge.
    pub fn phase(&self, p: Phase) {
        self.live.phase(p);
    }
}

/// Serves the command's registry when `--metrics` asks for it, naming the command
/// `name` in its info metric; the endpoint's address goes to standard error.
pub fn serve(settings: &CommandSettings, name: &str) -> Result<Option<Served>, AppError> {
    let given = settings.get(&METRICS).as_str();
    if given.is_empty() {
        return Ok(None);
    }
    let mut at = MetricsAddr::parse(given)?;
    let mut live = Live::new(name);
    if crate::cluster::active() {
        let rank = crate::cluster::rank();
        if settings.get(&METRICS_PER_RANK) == Value::Flag(true) {
            at = at.offset(u16::try_from(rank).unwrap_or(u16::MAX))?;
        } else if rank == 0 {
            live = live.merging_ranks();
        } else {
            return Ok(None);
        }
    }
    let endpoint = Endpoint::serve(at, live.clone())?;
    eprintln!("metrics: http://{}/metrics", endpoint.addr);
    Ok(Some(Served {
        live,
        _endpoint: endpoint,
    }))
}
