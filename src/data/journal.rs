//! The crash journal: enough on disk to tell, after `kill -9` (or, with a strict sync
//! policy, power loss), which write each unit should hold, so `ioscope verify` can
//! report lost writes, and a later run can continue the key sequence.
//!
//! Layout of a journal directory:
//! - `journal.hdr` — text: format version, target URI, unit size, working-set size.
//! - `map.<session>` — checkpoint: `b"IOSCMAP1"`, units (u64 LE), one u16 LE entry
//!   per unit (the key map's encoding), then `hash64` of everything before (u64 LE).
//!   Written at every `open_or_create` (temp file, fsync, rename, fsync directory),
//!   after which older maps and logs are deleted: the journal is compacted per run.
//! - `log.<session>.<worker>` — append-only 24-byte records, one file per worker so
//!   appending needs no lock: `time_ns` u64 | `unit` u64 | `key` u16 | `kind` u8
//!   (1 intent, 2 commit) | `flags` u8 (intent: joined; commit: ok, clean,
//!   reissued) | check
//!   u32 (low half of `hash64` of the first 20 bytes). A torn or garbled record ends
//!   its file: everything before it is used, nothing after.
//!
//! Ordering rule for the worker: an intent record is written (write(2)) before the
//! write it describes is submitted — `before_submit` does that — so a killed process
//! never leaves a write the journal does not know. fsync is batched (by count and
//! time); a power loss can lose the unsynced tail, which only `SyncPolicy::strict`
//! prevents. Commits are buffered freely: a missing commit only widens what verify
//! accepts (old or new content) for that unit.

use crate::data::hash::hash64;
use crate::data::keymap::{key_distance, KeyExpectation, WriteTicket, HALF, KEY_MASK, UNCERTAIN};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Journal format version in `journal.hdr`.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes per log record.
pub const RECORD_BYTES: usize = 24;
const KIND_INTENT: u8 = 1;
const KIND_COMMIT: u8 = 2;
const FLAG_JOINED: u8 = 1;
const FLAG_OK: u8 = 1;
const FLAG_CLEAN: u8 = 2;
/// Commit flag: the write was issued on two paths (multipath); its first copy may
/// land at any later time, so its unit stays uncertain through the whole replay.
const FLAG_REISSUED: u8 = 4;
const MAP_MAGIC: &[u8; 8] = b"IOSCMAP1";
/// Records a writer buffers before it must write them out.
const BUFFER_RECORDS: usize = 4096;

/// A journal failure, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal {path}: {op}")]
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("journal {path}: {what}")]
    Format { path: PathBuf, what: String },
    #[error(
        "journal {path} belongs to {found}, not {wanted}; use another --journal directory or the same target and sizes"
    )]
    Mismatch {
        path: PathBuf,
        found: String,
        wanted: String,
    },
}

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> JournalError + 'a {
    move |source| JournalError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// When a writer fsyncs its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncPolicy {
    /// fsync once this many records are unsynced (1 = before every submit).
    pub every_records: u32,
    /// …or once the oldest unsynced record is this old.
    pub every_ns: u64,
}

impl SyncPolicy {
    /// fsync before every submit that carries an intent: power-loss safe, slowest.
    pub fn strict() -> Self {
        SyncPolicy {
            every_records: 1,
            every_ns: 0,
        }
    }
}

impl Default for SyncPolicy {
    /// Batched: every 1024 records or 10 ms, whichever comes first.
    fn default() -> Self {
        SyncPolicy {
            every_records: 1024,
            every_ns: 10_000_000,
        }
    }
}

/// The identity a journal is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalHeader {
    pub version: u32,
    pub target: String,
    pub unit_bytes: u32,
    pub working_set_bytes: u64,
}

impl JournalHeader {
    fn units(&self) -> u64 {
        self.working_set_bytes / self.unit_bytes as u64
    }

    fn render(&self) -> String {
        format!(
            "ioscope-journal {}\ntarget {}\nunit_bytes {}\nworking_set_bytes {}\n",
            self.version, self.target, self.unit_bytes, self.working_set_bytes
        )
    }

    fn parse(text: &str, path: &Path) -> Result<Self, JournalError> {
        let bad = |what: &str| JournalError::Format {
            path: path.to_path_buf(),
            what: what.to_string(),
        };
        let mut version = None;
        let mut target = None;
        let mut unit = None;
        let mut ws = None;
        for line in text.lines() {
            let (k, v) = line.split_once(' ').unwrap_or((line, ""));
            match k {
                "ioscope-journal" => version = v.parse().ok(),
                "target" => target = Some(v.to_string()),
                "unit_bytes" => unit = v.parse().ok(),
                "working_set_bytes" => ws = v.parse().ok(),
                _ => {}
            }
        }
        let h = JournalHeader {
            version: version.ok_or_else(|| bad("not an ioscope journal header"))?,
            target: target.ok_or_else(|| bad("no target line"))?,
            unit_bytes: unit.ok_or_else(|| bad("no unit_bytes line"))?,
            working_set_bytes: ws.ok_or_else(|| bad("no working_set_bytes line"))?,
        };
        if h.version != FORMAT_VERSION {
            return Err(bad(&format!(
                "format version {} (this ioscope reads {FORMAT_VERSION})",
                h.version
            )));
        }
        if h.unit_bytes == 0 {
            return Err(bad("unit_bytes 0"));
        }
        Ok(h)
    }
}

/// A write that was in flight when the journal ended: the unit may hold `old` (an
/// entry, possibly `UNCERTAIN`), any key up to `new_key`, or a mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    pub unit: u64,
    pub old: u16,
    pub new_key: u16,
}

/// What a journal says about its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub header: JournalHeader,
    /// Key-map entry per unit after replay (in-flight units: the last committed state).
    pub map: Vec<u16>,
    /// Writes with an intent and no commit, sorted by unit.
    pub in_flight: Vec<InFlight>,
    /// Session number of the last checkpoint or log replayed.
    pub session: u32,
    /// Records replayed.
    pub records: u64,
    /// Bytes ignored at the ends of logs (torn or garbled tails).
    pub torn_tail_bytes: u64,
}

impl Recovered {
    /// What a read of `unit` may find now (nothing running).
    pub fn expectation(&self, unit: u64) -> KeyExpectation {
        match self.in_flight.binary_search_by_key(&unit, |f| f.unit) {
            Ok(i) => {
                let f = self.in_flight[i];
                let old_key = f.old & KEY_MASK;
                let (older, absent) = if f.old & UNCERTAIN != 0 {
                    (HALF, true)
                } else if old_key == 0 {
                    (key_distance(f.new_key, 1), true)
                } else {
                    (key_distance(f.new_key, old_key).min(HALF), false)
                };
                KeyExpectation {
                    newest: f.new_key,
                    older,
                    may_be_absent: absent,
                    raced: true,
                }
            }
            Err(_) => KeyExpectation::at_rest(self.map[unit as usize]),
        }
    }

    /// Entries for a run that continues this journal: in-flight units become
    /// `UNCERTAIN` at their newest key, so old, new and torn content all pass until
    /// they are rewritten.
    pub fn continue_entries(&self) -> Vec<u16> {
        let mut m = self.map.clone();
        for f in &self.in_flight {
            m[f.unit as usize] = f.new_key | UNCERTAIN;
        }
        m
    }
}

/// An open journal for one target. Make one [`JournalWriter`] per worker.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    header: JournalHeader,
    session: u32,
}

fn parse_session(name: &str, prefix: &str) -> Option<(u32, Option<u32>)> {
    let rest = name.strip_prefix(prefix)?;
    let mut parts = rest.split('.');
    let s = parts.next()?.parse().ok()?;
    let w = parts.next().map(|w| w.parse().ok()).unwrap_or(None);
    Some((s, w))
}

fn sync_dir(dir: &Path) -> Result<(), JournalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("fsync directory", dir))
}

/// Writes `bytes` to `dir/name` atomically and durably.
fn write_durably(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), JournalError> {
    let tmp = dir.join(format!("{name}.tmp"));
    let path = dir.join(name);
    let mut f = File::create(&tmp).map_err(io_err("create", &tmp))?;
    f.write_all(bytes).map_err(io_err("write", &tmp))?;
    f.sync_all().map_err(io_err("fsync", &tmp))?;
    fs::rename(&tmp, &path).map_err(io_err("rename", &path))?;
    sync_dir(dir)
}

impl Journal {
    /// Opens the journal in `dir` (creating it for `target` if empty), replays it,
    /// compacts it into a new checkpoint and starts a new session. Returns the journal
    /// and what it recovered; start the run's [`crate::data::KeyMap`] from
    /// `recovered.continue_entries()`. Fails if the journal belongs to another target,
    /// unit size or working set.
    pub fn open_or_create(
        dir: &Path,
        target: &str,
        unit_bytes: u32,
        working_set_bytes: u64,
    ) -> Result<(Journal, Recovered), JournalError> {
        fs::create_dir_all(dir).map_err(io_err("create directory", dir))?;
        let wanted = JournalHeader {
            version: FORMAT_VERSION,
            target: target.to_string(),
            unit_bytes,
            working_set_bytes,
        };
        let hdr_path = dir.join("journal.hdr");
        if hdr_path.exists() {
            let text = fs::read_to_string(&hdr_path).map_err(io_err("read", &hdr_path))?;
            let found = JournalHeader::parse(&text, &hdr_path)?;
            if found != wanted {
                return Err(JournalError::Mismatch {
                    path: hdr_path,
                    found: format!(
                        "target {} with {}-byte units over {} bytes",
                        found.target, found.unit_bytes, found.working_set_bytes
                    ),
                    wanted: format!(
                        "target {target} with {unit_bytes}-byte units over {working_set_bytes} bytes"
                    ),
                });
            }
        } else {
            write_durably(dir, "journal.hdr", wanted.render().as_bytes())?;
        }
        let recovered = Journal::load(dir)?;
        let session = recovered.session + 1;
        // Checkpoint what was recovered, then drop what it replaces.
        let entries = recovered.continue_entries();
        let mut bytes = Vec::with_capacity(16 + entries.len() * 2 + 8);
        bytes.extend_from_slice(MAP_MAGIC);
        bytes.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for e in &entries {
            bytes.extend_from_slice(&e.to_le_bytes());
        }
        let h = hash64(&bytes, 0);
        bytes.extend_from_slice(&h.to_le_bytes());
        write_durably(dir, &format!("map.{session:08}"), &bytes)?;
        for entry in fs::read_dir(dir).map_err(io_err("list", dir))? {
            let entry = entry.map_err(io_err("list", dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let old = parse_session(&name, "map.")
                .or_else(|| parse_session(&name, "log."))
                .is_some_and(|(s, _)| s < session);
            if old {
                let _ = fs::remove_file(entry.path());
            }
        }
        sync_dir(dir)?;
        Ok((
            Journal {
                dir: dir.to_path_buf(),
                header: recovered.header.clone(),
                session,
            },
            recovered,
        ))
    }

    /// The identity this journal is bound to.
    pub fn header(&self) -> &JournalHeader {
        &self.header
    }

    /// A log writer for one worker (each worker needs its own `worker` number).
    pub fn writer(&self, worker: u32, policy: SyncPolicy) -> Result<JournalWriter, JournalError> {
        let path = self
            .dir
            .join(format!("log.{:08}.{worker:04}", self.session));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_err("create", &path))?;
        sync_dir(&self.dir)?;
        Ok(JournalWriter {
            file,
            path,
            buf: Vec::with_capacity(BUFFER_RECORDS * RECORD_BYTES),
            seed: self.session as u64,
            unwritten_intents: false,
            unsynced: 0,
            oldest_unsynced_ns: 0,
            policy,
            syncs: 0,
        })
    }

    /// Reads a journal without changing it (for `ioscope verify`).
    pub fn load(dir: &Path) -> Result<Recovered, JournalError> {
        let hdr_path = dir.join("journal.hdr");
        let text = fs::read_to_string(&hdr_path).map_err(io_err("read", &hdr_path))?;
        let header = JournalHeader::parse(&text, &hdr_path)?;
        let units = header.units();
        let mut maps = Vec::new();
        let mut logs = Vec::new();
        for entry in fs::read_dir(dir).map_err(io_err("list", dir))? {
            let entry = entry.map_err(io_err("list", dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") {
                continue;
            }
            if let Some((s, None)) = parse_session(&name, "map.") {
                maps.push((s, entry.path()));
            } else if let Some((s, Some(w))) = parse_session(&name, "log.") {
                logs.push((s, w, entry.path()));
            }
        }
        // The newest checkpoint that reads back whole.
        maps.sort();
        let mut base = None;
        for (s, path) in maps.iter().rev() {
            let bytes = fs::read(path).map_err(io_err("read", path))?;
            if let Some(m) = parse_map(&bytes, units) {
                base = Some((*s, m));
                break;
            }
        }
        let (base_session, mut map) = base.unwrap_or((0, vec![0u16; units as usize]));
        let mut records: Vec<LogRecord> = Vec::new();
        let mut torn_tail_bytes = 0u64;
        let mut session = base_session;
        for (s, _, path) in logs.iter().filter(|(s, _, _)| *s >= base_session) {
            session = session.max(*s);
            torn_tail_bytes += read_log(*s, path, units, &mut records)?;
        }
        // Merge the workers' logs by time; per unit, keys order intents (see replay).
        records.sort_by_key(|r| (r.0, r.1));
        let mut busy: HashMap<u64, (u32, u16, u16)> = HashMap::new();
        let mut reissued: Vec<u64> = Vec::new();
        for &(_, _, unit, key, kind, flags) in &records {
            let cur = map[unit as usize];
            let ck = cur & KEY_MASK;
            match kind {
                KIND_INTENT => {
                    let newer = ck == 0 || (key != ck && key_distance(key, ck) <= HALF);
                    let b = busy.entry(unit).or_insert((0, cur, key));
                    b.0 += 1;
                    if newer {
                        b.2 = key;
                        let flag = if flags & FLAG_JOINED != 0 {
                            UNCERTAIN
                        } else {
                            cur & UNCERTAIN
                        };
                        map[unit as usize] = key | flag;
                    } else {
                        // Logged out of order with a newer intent: they overlapped.
                        map[unit as usize] = cur | UNCERTAIN;
                    }
                }
                KIND_COMMIT => {
                    if let Some(b) = busy.get_mut(&unit) {
                        b.0 -= 1;
                        if b.0 == 0 {
                            busy.remove(&unit);
                        }
                    }
                    if flags & FLAG_REISSUED != 0 {
                        reissued.push(unit);
                    }
                    if flags & FLAG_OK == 0 {
                        map[unit as usize] = cur | UNCERTAIN;
                    } else if flags & FLAG_CLEAN != 0 && ck == key {
                        map[unit as usize] = key;
                    }
                }
                _ => {}
            }
        }
        // A later clean write does not settle a unit a stalled path may still write.
        for unit in reissued {
            map[unit as usize] |= UNCERTAIN;
        }
        let mut in_flight: Vec<InFlight> = busy
            .into_iter()
            .map(|(unit, (_, old, new_key))| InFlight { unit, old, new_key })
            .collect();
        in_flight.sort_by_key(|f| f.unit);
        Ok(Recovered {
            header,
            map,
            in_flight,
            session,
            records: records.len() as u64,
            torn_tail_bytes,
        })
    }
}

/// One log record: session, time, unit, key, kind, flags.
type LogRecord = (u32, u64, u64, u16, u8, u8);

/// Appends the whole records of one worker's log of session `s` (up to the first
/// that fails its check or names a unit past the end); returns the torn tail's bytes.
fn read_log(
    s: u32,
    path: &Path,
    units: u64,
    records: &mut Vec<LogRecord>,
) -> Result<u64, JournalError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(io_err("read", path))?;
    let mut good = 0;
    for r in bytes.chunks_exact(RECORD_BYTES) {
        let check = u32::from_le_bytes(r[20..24].try_into().unwrap());
        if hash64(&r[..20], s as u64) as u32 != check {
            break;
        }
        let unit = u64::from_le_bytes(r[8..16].try_into().unwrap());
        if unit >= units {
            break;
        }
        records.push((
            s,
            u64::from_le_bytes(r[0..8].try_into().unwrap()),
            unit,
            u16::from_le_bytes([r[16], r[17]]),
            r[18],
            r[19],
        ));
        good += RECORD_BYTES;
    }
    Ok((bytes.len() - good) as u64)
}

fn parse_map(bytes: &[u8], units: u64) -> Option<Vec<u16>> {
    let len = 16 + units as usize * 2 + 8;
    if bytes.len() != len || &bytes[..8] != MAP_MAGIC {
        return None;
    }
    if u64::from_le_bytes(bytes[8..16].try_into().unwrap()) != units {
        return None;
    }
    let h = u64::from_le_bytes(bytes[len - 8..].try_into().unwrap());
    if hash64(&bytes[..len - 8], 0) != h {
        return None;
    }
    Some(
        bytes[16..len - 8]
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect(),
    )
}

/// One worker's append-only log. Records go to a preallocated buffer (no allocation,
/// no syscall); `before_submit` writes intents out and fsyncs per the policy.
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    seed: u64,
    unwritten_intents: bool,
    unsynced: u32,
    oldest_unsynced_ns: u64,
    policy: SyncPolicy,
    syncs: u64,
}

impl JournalWriter {
    #[inline]
    fn push(&mut self, now_ns: u64, unit: u64, key: u16, kind: u8, flags: u8) -> io::Result<()> {
        if self.buf.len() + RECORD_BYTES > self.buf.capacity() {
            self.write_out()?;
        }
        let mut r = [0u8; RECORD_BYTES];
        r[0..8].copy_from_slice(&now_ns.to_le_bytes());
        r[8..16].copy_from_slice(&unit.to_le_bytes());
        r[16..18].copy_from_slice(&key.to_le_bytes());
        r[18] = kind;
        r[19] = flags;
        let check = hash64(&r[..20], self.seed) as u32;
        r[20..24].copy_from_slice(&check.to_le_bytes());
        self.buf.extend_from_slice(&r);
        if self.unsynced == 0 {
            self.oldest_unsynced_ns = now_ns;
        }
        self.unsynced += 1;
        Ok(())
    }

    /// Records that the write `t` is about to be submitted. Call after
    /// `KeyMap::begin_write`, then call `before_submit` before the engine submit.
    #[inline]
    pub fn record_intent(&mut self, t: &WriteTicket, now_ns: u64) -> io::Result<()> {
        self.unwritten_intents = true;
        let flags = if t.joined { FLAG_JOINED } else { 0 };
        self.push(now_ns, t.unit, t.key, KIND_INTENT, flags)
    }

    /// Records that the write `t` completed (`ok`) and whether `KeyMap::end_write`
    /// returned `clean`.
    #[inline]
    pub fn record_commit(
        &mut self,
        t: &WriteTicket,
        ok: bool,
        clean: bool,
        now_ns: u64,
    ) -> io::Result<()> {
        let flags = if ok { FLAG_OK } else { 0 } | if clean { FLAG_CLEAN } else { 0 };
        self.push(now_ns, t.unit, t.key, KIND_COMMIT, flags)
    }

    /// Records that the write `t`, issued on two paths, completed (`ok`): replay
    /// keeps its unit uncertain even after later clean writes (see `FLAG_REISSUED`).
    pub fn record_reissued_commit(
        &mut self,
        t: &WriteTicket,
        ok: bool,
        now_ns: u64,
    ) -> io::Result<()> {
        let flags = FLAG_REISSUED | if ok { FLAG_OK } else { 0 };
        self.push(now_ns, t.unit, t.key, KIND_COMMIT, flags)
    }

    /// Call before each engine submit: writes buffered records out if any intent is
    /// among them (one write(2)), and fsyncs if the policy says it is due. Cheap when
    /// there is nothing to do.
    #[inline]
    pub fn before_submit(&mut self, now_ns: u64) -> io::Result<()> {
        if self.unwritten_intents {
            self.write_out()?;
        }
        let due = self.unsynced >= self.policy.every_records
            || (self.unsynced > 0
                && now_ns.saturating_sub(self.oldest_unsynced_ns) >= self.policy.every_ns);
        if due {
            self.sync()?;
        }
        Ok(())
    }

    /// Writes and fsyncs everything buffered (end of run, interval ticks).
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_out()?;
        if self.unsynced > 0 {
            self.sync()?;
        }
        Ok(())
    }

    /// fsync calls made so far.
    pub fn syncs(&self) -> u64 {
        self.syncs
    }

    /// The log file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_out(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.unwritten_intents = false;
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.write_out()?;
        self.file.sync_data()?;
        self.syncs += 1;
        self.unsynced = 0;
        Ok(())
    }
}

impl Drop for JournalWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::keymap::KeyMap;

    const UNIT: u32 = 4096;
    const WS: u64 = 16 * UNIT as u64;

    fn open(dir: &Path) -> (Journal, Recovered) {
        Journal::open_or_create(dir, "/var/tmp/t.img", UNIT, WS).unwrap()
    }

    // Regression: offline verify called a late copy of a multipath re-issued write
    // stale because a later clean write had settled its unit.
    #[test]
    fn a_reissued_write_keeps_its_unit_uncertain_past_later_clean_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let (j, rec) = open(tmp.path());
        let map = KeyMap::from_entries(rec.continue_entries());
        let mut w = j.writer(0, SyncPolicy::default()).unwrap();
        let t = map.begin_write(4);
        w.record_intent(&t, 1).unwrap();
        map.end_write(t, true);
        w.record_reissued_commit(&t, true, 2).unwrap();
        let later = map.begin_write(4);
        w.record_intent(&later, 3).unwrap();
        let clean = map.end_write(later, true);
        assert!(clean);
        w.record_commit(&later, true, clean, 4).unwrap();
        // An ordinary unit written the same way settles.
        let u = map.begin_write(5);
        w.record_intent(&u, 5).unwrap();
        let clean = map.end_write(u, true);
        w.record_commit(&u, true, clean, 6).unwrap();
        w.flush().unwrap();
        let rec = Journal::load(tmp.path()).unwrap();
        assert_eq!(rec.map[4], later.key | UNCERTAIN);
        assert!(rec.expectation(4).accepts(t.key) && rec.expectation(4).raced);
        assert_eq!(rec.expectation(5), KeyExpectation::exact(u.key));
    }

    #[test]
    fn round_trip_in_flight_and_continue() {
        let tmp = tempfile::tempdir().unwrap();
        let (j, rec) = open(tmp.path());
        assert_eq!(rec.map, vec![0u16; 16]);
        let map = KeyMap::from_entries(rec.continue_entries());
        let mut w = j.writer(0, SyncPolicy::default()).unwrap();
        let mut now = 1;
        let mut tick = || {
            now += 1;
            now
        };
        // Unit 0: two clean writes. Unit 1: written, then one in flight at the "crash".
        // Unit 2: two overlapping writes. Unit 3: a failed write.
        for _ in 0..2 {
            let t = map.begin_write(0);
            w.record_intent(&t, tick()).unwrap();
            w.before_submit(tick()).unwrap();
            let clean = map.end_write(t, true);
            w.record_commit(&t, true, clean, tick()).unwrap();
        }
        let t = map.begin_write(1);
        w.record_intent(&t, tick()).unwrap();
        let clean = map.end_write(t, true);
        w.record_commit(&t, true, clean, tick()).unwrap();
        let pending = map.begin_write(1);
        w.record_intent(&pending, tick()).unwrap();
        let a = map.begin_write(2);
        w.record_intent(&a, tick()).unwrap();
        let b = map.begin_write(2);
        w.record_intent(&b, tick()).unwrap();
        let cb = map.end_write(b, true);
        w.record_commit(&b, true, cb, tick()).unwrap();
        let ca = map.end_write(a, true);
        w.record_commit(&a, true, ca, tick()).unwrap();
        let f = map.begin_write(3);
        w.record_intent(&f, tick()).unwrap();
        map.end_write(f, false);
        w.record_commit(&f, false, false, tick()).unwrap();
        w.before_submit(tick()).unwrap();
        // kill -9: no flush, no drop; what before_submit wrote must be enough.
        std::mem::forget(w);

        let rec = Journal::load(tmp.path()).unwrap();
        assert_eq!(rec.torn_tail_bytes, 0);
        let live = map.snapshot();
        assert_eq!(rec.map[0], live[0]);
        assert_eq!(rec.map[0], 2, "two clean writes: exactly key 2");
        assert_eq!(rec.map[2], live[2]);
        assert_ne!(rec.map[2] & UNCERTAIN, 0);
        assert_ne!(rec.map[3] & UNCERTAIN, 0);
        assert_eq!(
            rec.in_flight,
            vec![InFlight {
                unit: 1,
                old: 1,
                new_key: 2
            }]
        );
        let e = rec.expectation(1);
        assert!(e.accepts(1) && e.accepts(2) && !e.accepts(3) && e.raced);
        assert_eq!(rec.expectation(0), KeyExpectation::exact(2));
        assert!(!rec.expectation(5).is_tracked());

        // A later run continues the keys; the old session's files are compacted away.
        let (j2, rec2) = open(tmp.path());
        assert_eq!(rec2.map, rec.map);
        let map2 = KeyMap::from_entries(rec2.continue_entries());
        assert_eq!(map2.begin_write(0).key, 3);
        assert_eq!(map2.begin_write(1).key, 3);
        drop(j2.writer(1, SyncPolicy::strict()).unwrap());
        let names: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names.iter().any(|n| n.starts_with("log.00000001")),
            "{names:?}"
        );
        let rec3 = Journal::load(tmp.path()).unwrap();
        assert_eq!(rec3.map[1], 2 | UNCERTAIN);
        assert!(rec3.in_flight.is_empty());
    }

    #[test]
    fn torn_tail_is_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        let (j, rec) = open(tmp.path());
        let map = KeyMap::from_entries(rec.continue_entries());
        let path;
        {
            let mut w = j.writer(3, SyncPolicy::strict()).unwrap();
            for unit in 0..4 {
                let t = map.begin_write(unit);
                w.record_intent(&t, unit + 1).unwrap();
                w.before_submit(unit + 1).unwrap();
                let c = map.end_write(t, true);
                w.record_commit(&t, true, c, unit + 1).unwrap();
            }
            w.flush().unwrap();
            assert!(w.syncs() >= 4);
            path = w.path().to_path_buf();
        }
        // A half-written record after kill -9.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[0xab; RECORD_BYTES / 2]).unwrap();
        drop(f);
        let rec = Journal::load(tmp.path()).unwrap();
        assert_eq!(rec.torn_tail_bytes, (RECORD_BYTES / 2) as u64);
        assert_eq!(&rec.map[..5], &[1, 1, 1, 1, 0]);
        // A garbled record ends the log there: units after it fall back.
        let mut bytes = fs::read(&path).unwrap();
        bytes[4 * RECORD_BYTES + 9] ^= 0xff; // unit 2's intent
        fs::write(&path, &bytes).unwrap();
        let rec = Journal::load(tmp.path()).unwrap();
        assert_eq!(&rec.map[..4], &[1, 1, 0, 0]);
        assert_eq!(rec.records, 4);
    }

    #[test]
    fn another_target_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        drop(open(tmp.path()));
        let err = Journal::open_or_create(tmp.path(), "/dev/other", UNIT, WS).unwrap_err();
        assert!(err.to_string().contains("/dev/other"), "{err}");
        let err = Journal::open_or_create(tmp.path(), "/var/tmp/t.img", 512, WS).unwrap_err();
        assert!(matches!(err, JournalError::Mismatch { .. }));
    }
}
