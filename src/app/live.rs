//! The command's live metrics (`--metrics`): one registry for the whole command,
//! served on its endpoint from before the first run until the command ends (the
//! session owns it). Under mpirun each rank serves its own figures with
//! `--metrics-per-rank` (on the port plus its rank); rank 0's merged view is not
//! served yet, so `--metrics` alone is refused there rather than showing one rank
//! as if it were all of them.

use super::{AppError, Output};
use crate::metrics::{Endpoint, Live, MetricsAddr, Phase};
use crate::plan::settings::declared::{METRICS, METRICS_PER_RANK};
use crate::plan::settings::Value;

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

/// Serves the command's registry when `--metrics` asks for it; the endpoint's
/// address goes to standard error.
pub fn serve(out: &Output, command: &[String]) -> Result<Option<Served>, AppError> {
    let given = out.settings.get(&METRICS).as_str();
    if given.is_empty() {
        return Ok(None);
    }
    let mut at = MetricsAddr::parse(given)?;
    if crate::cluster::active() {
        if out.settings.get(&METRICS_PER_RANK) != Value::Flag(true) {
            return Err(AppError::Refused(
                "--metrics under mpirun: rank 0's merged view is not served yet; add \
                 --metrics-per-rank to have each rank serve its own on the port plus \
                 its rank number"
                    .into(),
            ));
        }
        let rank = u16::try_from(crate::cluster::rank()).unwrap_or(u16::MAX);
        at = at.offset(rank)?;
    }
    let name = command.get(1).map_or("ioscope", String::as_str);
    let live = Live::new(name);
    let endpoint = Endpoint::serve(at, live.clone())?;
    eprintln!("metrics: http://{}/metrics", endpoint.addr);
    Ok(Some(Served {
        live,
        _endpoint: endpoint,
    }))
}
