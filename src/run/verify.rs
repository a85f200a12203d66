//! The `--verify-after` pass: once the workers are done, every unit written under
//! verification is read back and checked against the key map at rest.

use super::buffers::AlignedBuf;
use super::data;
use crate::target::{Backing, OpenTarget};

/// Reads back every unit of `t` that was written under verification and checks it
/// against the key map at rest (the `--verify-after` pass).
pub fn verify_pass(
    t: &OpenTarget,
    st: &data::TargetState,
    unit: u64,
    out: &mut crate::result::VerifyResult,
) -> std::io::Result<()> {
    const CHUNK: u64 = 1 << 20;
    let units = st.map.units();
    let chunk_units = (CHUNK / unit).max(1);
    let mut buf = AlignedBuf::new((chunk_units * unit) as usize)
        .ok_or_else(|| std::io::Error::other("cannot allocate the verify buffer"))?;
    let mut u = 0;
    while u < units {
        // Skip never-written units without reading them.
        if !st.map.expect_at_rest(u).is_tracked() {
            u += 1;
            continue;
        }
        let n = chunk_units.min(units - u);
        let bytes = (n * unit) as usize;
        let off = u * unit;
        let data = &mut buf.as_mut_slice()[..bytes];
        match &t.backing {
            Backing::File { set: Some(s), .. } => s.read_exact_at(data, off)?,
            Backing::File { file, .. } => {
                use std::os::unix::fs::FileExt;
                file.read_exact_at(data, off)?;
            }
            Backing::Nbd(n) => n.read_at(data, off)?,
            Backing::Iscsi(i) => i.read_at(data, off)?,
            Backing::Smb(s) => s.read_at(data, off)?,
            Backing::Nfs(n) => n.read_at(data, off)?,
            Backing::Mem(m) => {
                // SAFETY: `data` is this pass's own buffer of `bytes` bytes.
                if !unsafe { m.read_into(off, data.as_mut_ptr(), bytes) } {
                    return Err(std::io::Error::other("unit range beyond the mem target"));
                }
            }
            _ => return Ok(()),
        }
        for i in 0..n {
            let e = st.map.expect_at_rest(u + i);
            if !e.is_tracked() {
                continue;
            }
            let slice = &data[(i * unit) as usize..((i + 1) * unit) as usize];
            st.check_unit(out, slice, u + i, off + i * unit, &e, &t.uri);
        }
        u += n;
    }
    Ok(())
}
