//! fio's `sprandom` (SanDisk's SPRandom SSD preconditioning) with `spr_op`,
//! `spr_num_regions` and `spr_cs` → the workload's `sprandom` (see `run::sprandom`).
//! fio requires random writes, `random_generator=lfsr` and `norandommap=1` (it sets
//! the last two itself when they are not given, and refuses other values); ioscope
//! refuses the same combinations. Without `sprandom=1` the `spr_*` options change
//! nothing in fio, nor here.

use super::JobCx;
use crate::plan::compat::CompatError;
use crate::plan::model::{AccessPattern, Sprandom};
use crate::plan::units::parse_size_allow_zero;

impl JobCx<'_> {
    /// The job's SPRandom settings, when `sprandom` is on.
    pub(super) fn sprandom(
        &mut self,
        read_pct: u8,
        pattern: &AccessPattern,
    ) -> Result<Option<Sprandom>, CompatError> {
        let on = self.o.flag("sprandom")?;
        let op = self.o.get("spr_op");
        let regions = self.o.get("spr_num_regions");
        let cache = self.o.get("spr_cs");
        if !on {
            return Ok(None);
        }
        let at = self.o.get("sprandom").map(|(_, l)| l.clone());
        let at = at.as_ref().unwrap_or(self.section_loc);
        if read_pct == 100 || !matches!(pattern, AccessPattern::Random) {
            return Err(at.error("sprandom=1 needs random writes (rw=randwrite), as fio requires"));
        }
        if let Some((v, l)) = self.o.get("random_generator") {
            if !v.trim().eq_ignore_ascii_case("lfsr") {
                return Err(l.error(format!(
                    "random_generator={v}: sprandom requires random_generator=lfsr, as fio does"
                )));
            }
        }
        if self.o.has("norandommap") && !self.o.flag("norandommap")? {
            let l = self.o.get("norandommap").map(|(_, l)| l.clone());
            return Err(l
                .as_ref()
                .unwrap_or(at)
                .error("norandommap=0: sprandom requires norandommap=1, as fio does"));
        }
        let mut spr = Sprandom::default();
        if let Some((v, l)) = op {
            // fio's spr_op is a float list; its first value is the ratio.
            let first = v.split([':', ',']).next().unwrap_or("").trim();
            spr.op = match first.parse::<f64>() {
                Ok(x) if x > 0.0 && x < 1.0 => x,
                _ => {
                    return Err(l.error(format!(
                        "spr_op={v}: expected an over-provisioning ratio between 0 and 1"
                    )))
                }
            };
        }
        if let Some((v, l)) = regions {
            spr.regions = match v.trim().parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(l.error(format!(
                        "spr_num_regions={v}: expected a whole number of regions, at least 1"
                    )))
                }
            };
        }
        if let Some((v, l)) = cache {
            spr.cache_bytes =
                parse_size_allow_zero(v).map_err(|e| l.error(format!("spr_cs={v}: {e}")))?;
        }
        Ok(Some(spr))
    }
}
