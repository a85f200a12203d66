//! fio jobs on the `nfs` engine (libnfs): `nfs_url` names the export (fio mounts
//! its whole path) and the job's file name — `filename`, else `filename_format`,
//! else fio's `JOBNAME.0.0` — a file in it, so the job's target is
//! `nfs://HOST[:PORT]/EXPORT/FILE`, run by ioscope's own nfs engine (libnfs too).
//! libnfs's `nfsport=N` URL argument becomes the URI's `:N`, `mountport=N` stays;
//! other libnfs arguments (`version=4`, `uid=`, …) are listed as unsupported.

use super::{JobCx, JobTarget};
use crate::plan::compat::CompatError;
use crate::plan::model::EngineKind;

impl JobCx<'_> {
    /// The file of an `nfs` job; `None` for any other engine (whose `nfs_url` is then
    /// listed as unsupported).
    pub(super) fn nfs_target(
        &mut self,
        engine: EngineKind,
        streams: u32,
    ) -> Result<Option<JobTarget>, CompatError> {
        if engine != EngineKind::Nfs {
            self.only_with("ioengine=nfs", &["nfs_url"]);
            return Ok(None);
        }
        let o = self.o;
        let Some((url, url_loc)) = o.get("nfs_url").filter(|(u, _)| !u.trim().is_empty()) else {
            return Err(self.section_loc.error(format!(
                "job '{}': ioengine=nfs needs nfs_url= (the export, nfs://HOST/EXPORT)",
                self.name
            )));
        };
        let export = self.export_uri(url.trim(), url_loc)?;
        let (file, from_format) = self.nfs_file_name(streams)?;
        // The region, nrfiles and offset_increment as for a local file; the file is
        // created at the job's size when missing, as fio's nfs engine does.
        // One stream asked of it: the clone warnings are this module's (the file is
        // on the export, not in a local directory).
        let mut t = self.target(1, false, None)?;
        t.spread = t
            .increment
            .saturating_mul(u64::from(streams.saturating_sub(1)));
        t.uri = format!("{}/{file}{}", export.0, export.1);
        // A name from the job's own file options is shared by every job that writes
        // it (nfs.fio reads what its write job wrote): not a private JOBNAME.0.0.
        t.from_directory = !from_format;
        Ok(Some(t))
    }

    /// `nfs_url`'s `nfs://HOST/EXPORT` and its query part (`?mountport=N`), with
    /// libnfs's `nfsport=N` moved into the authority.
    fn export_uri(&mut self, url: &str, loc: &super::Loc) -> Result<(String, String), CompatError> {
        let Some(rest) = url.strip_prefix("nfs://") else {
            return Err(loc.error(format!(
                "nfs_url={url}: expected nfs://HOST/EXPORT[?ARG=VALUE]"
            )));
        };
        let (base, query) = match rest.split_once('?') {
            Some((b, q)) => (b.trim_end_matches('/'), Some(q)),
            None => (rest.trim_end_matches('/'), None),
        };
        let Some((host, export)) = base
            .split_once('/')
            .filter(|(h, e)| !h.is_empty() && !e.is_empty())
        else {
            return Err(loc.error(format!("nfs_url={url}: no export after the host")));
        };
        let mut host = host.to_string();
        let mut kept = Vec::new();
        for kv in query.into_iter().flat_map(|q| q.split('&')) {
            match kv.split_once('=') {
                Some(("nfsport", p)) if !host.contains(':') => host = format!("{host}:{p}"),
                Some(("mountport", _)) => kept.push(kv.to_string()),
                _ => self.unsupported.push(
                    format!(
                        "nfs_url={url} — libnfs URL argument '{kv}': ioscope's nfs engine \
                         speaks NFSv3 as this process's user and takes only nfsport and \
                         mountport"
                    ),
                    loc,
                ),
            }
        }
        let query = if kept.is_empty() {
            String::new()
        } else {
            format!("?{}", kept.join("&"))
        };
        Ok((format!("nfs://{host}/{export}"), query))
    }

    /// The job's file name in the export, and whether the job named it
    /// (`filename`/`filename_format`) rather than fio's default. `$clientuid` is
    /// empty outside fio's client/server mode; `$jobnum` and `$filenum` are the first
    /// clone's and file's, 0: the streams share that file (a warning says so when
    /// fio would give each clone its own).
    fn nfs_file_name(&mut self, streams: u32) -> Result<(String, bool), CompatError> {
        let o = self.o;
        if let Some((f, loc)) = o.get("filename").filter(|(f, _)| !f.is_empty()) {
            let f = super::split_filenames(f)[0].clone();
            return self.plain_name(&f, loc).map(|n| (n, true));
        }
        let (name, _, loc, named) = self.first_file_name()?;
        let loc = loc.clone();
        self.say_clone_files(streams, &name);
        self.plain_name(&name, &loc).map(|n| (n, named))
    }

    /// fio gives each clone its own file when the name holds its number (`$jobnum`,
    /// as fio's default does); on an NFS export ioscope runs the clones' streams on one: said
    /// once.
    fn say_clone_files(&mut self, streams: u32, uri: &str) {
        if streams > 1 && self.clones_own_files() {
            self.clones_apart = true;
            let name = &self.name;
            let each = super::op_engines::first_file_of(self.file_name_format(), name, "N");
            self.warnings.push(format!(
                "job '{name}': fio gives each of the {streams} clones its own file \
                 ({each}); ioscope runs all {streams} streams on one file {uri}"
            ));
        }
    }

    /// A file name with no directory part (ioscope's nfs:// URI takes everything
    /// before the last '/' as the export).
    fn plain_name(&self, name: &str, loc: &super::Loc) -> Result<String, CompatError> {
        if name.contains('/') || name.is_empty() || name == "." || name == ".." {
            return Err(loc.error(format!(
                "job '{}': '{name}' is not a plain file name; with ioengine=nfs give the \
                 directory in nfs_url (the export) and a name without '/'",
                self.name
            )));
        }
        Ok(name.to_string())
    }
}
