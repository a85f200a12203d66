//! Directory trees of files (vdbench's file system definitions, `fsd=`): a `tree:`
//! target, `tree:DIR?depth=D&width=W&files=F&size=BYTES`, is a file set
//! ([`super::fileset::FileSetSpec`]) whose names are laid out as a tree under `DIR`:
//! `width` directories at the first level, `width` more inside each of those, down to
//! `depth` levels, and `files` files in each directory of the last level — `width^depth
//! × files` files in all, named as vdbench names them
//! (`vdb.1_2.dir/vdb.2_1.dir/vdb_f0003.file`: each level's directories numbered from
//! 1 inside their parent, each directory's files from 1) and in vdbench's order
//! ([`TreeShape::dir_path`]). `size=LEN:PCT,…&seed=N`
//! gives the files lengths drawn from a distribution ([`super::file_sizes`],
//! vdbench's `size=(64k,25,1m,75)`). Everything a `files:` set
//! does, a tree does: the file-operation engines make one call per file, the byte
//! engines read and write the files (file `i` holds offsets `i × size ..`), and the
//! directories are made when the target is opened (the anchor too, with its
//! parents, under `mkdir=parents`: vdbench's `create_anchors=yes`; otherwise the
//! anchor must exist). What differs (vdbench's rule):
//! a create on a tree looks for a file that does not exist and a delete for one that
//! does, so creates and deletes can run for a duration, side by side, on one tree.
//! `total=BYTES` (vdbench's `totalsize=`) uses only a subset of the files: those
//! vdbench's fixed-seed draw picks until they hold that many bytes, in tree order;
//! `wss=BYTES` (its `workingsetsize=`) draws again among those.

/// The shape of a tree: levels, directories per parent, files per leaf directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeShape {
    pub depth: u32,
    pub width: u64,
    /// Files in each directory of the last level.
    pub files: u64,
    /// Make the anchor directory, and any of its parents, when missing (`mkdir=parents`,
    /// vdbench's `create_anchors=yes`); otherwise the anchor must exist.
    pub make_anchor: bool,
    /// `total=BYTES` (vdbench's fsd `totalsize=`): only a subset of the files is
    /// used, drawn as vdbench draws it ([`super::file_subset`]).
    pub total_bytes: Option<u64>,
    /// `wss=BYTES` (vdbench's fsd `workingsetsize=`): of those, the subset vdbench's
    /// draw picks again until it holds this many bytes.
    pub wss_bytes: Option<u64>,
    /// `share=J/N` (vdbench's fsd `shared=yes` on N hosts): host J (from 0) takes
    /// the files whose number leaves J when divided by N, before any subset.
    pub share: Option<(u64, u64)>,
    /// `dist=all` (vdbench's fsd `distribution=all`): `files` files in every
    /// directory, not only in the last level's.
    pub in_all_dirs: bool,
}

/// Deepest tree accepted (vdbench's own trees rarely pass 6 levels).
const MAX_DEPTH: u32 = 32;

impl TreeShape {
    /// Directories of the last level (`width^depth`; 1, the anchor, at depth 0).
    pub fn leaves(&self) -> Option<u64> {
        self.width.checked_pow(self.depth)
    }

    /// Files in the tree, when the count fits in 64 bits.
    pub fn file_count(&self) -> Option<u64> {
        match self.in_all_dirs && self.depth > 0 {
            true => self.dir_count_checked()?.checked_mul(self.files),
            false => self.leaves()?.checked_mul(self.files),
        }
    }

    /// Directories in the tree, when the count fits in 64 bits.
    fn dir_count_checked(&self) -> Option<u64> {
        (1..=self.depth).try_fold(0u64, |n, l| n.checked_add(self.width.checked_pow(l)?))
    }

    /// Directories in the tree, every level counted.
    pub fn dir_count(&self) -> u64 {
        (1..=self.depth).map(|l| self.width.saturating_pow(l)).sum()
    }

    /// Path, relative to the anchor, of directory `rank` (0-based) of `level`
    /// (1-based) in vdbench's order: its list is made parents first, depth-first,
    /// then sorted (stably) by level and by each directory's number inside its
    /// parent (`Directory.compareTo`), so a level runs through every parent's first
    /// directory, then every parent's second, …: rank = own number × parents + the
    /// parent's place, its ancestors' numbers read as digits, the first the highest.
    pub fn dir_path(&self, level: u32, rank: u64) -> String {
        let w = self.width.max(1);
        let parents = w.saturating_pow(level.saturating_sub(1));
        let (own, mut rest) = (rank / parents, rank % parents);
        let mut parts = vec![String::new(); level as usize];
        parts[level as usize - 1] = format!("vdb.{level}_{}.dir", own + 1);
        for l in (1..level).rev() {
            parts[l as usize - 1] = format!("vdb.{l}_{}.dir", rest % w + 1);
            rest /= w;
        }
        parts.join("/")
    }

    /// Every directory, parents before their children (the order to make them in).
    pub fn dirs(&self) -> impl Iterator<Item = String> + '_ {
        (1..=self.depth)
            .flat_map(move |l| (0..self.width.saturating_pow(l)).map(move |i| self.dir_path(l, i)))
    }

    /// Name of file `i`, relative to the anchor: in the last level's directories,
    /// or with `in_all_dirs` in every directory, level by level.
    pub fn file_name(&self, i: u64) -> String {
        let files = self.files.max(1);
        let file = format!("vdb_f{:04}.file", i % files + 1);
        let mut dir = i / files;
        match self.depth {
            0 => file,
            d if !self.in_all_dirs => format!("{}/{file}", self.dir_path(d, dir)),
            d => {
                let mut level = 1;
                while level < d && dir >= self.width.saturating_pow(level) {
                    dir -= self.width.saturating_pow(level);
                    level += 1;
                }
                format!("{}/{file}", self.dir_path(level, dir))
            }
        }
    }

    /// Reads `depth`, `width` and `files` from a `tree:` query (`Err`: why the value
    /// is refused); `None` for any other key.
    pub fn take(&mut self, key: &str, value: &str) -> Option<Result<(), String>> {
        let n = || super::units::parse_count(value).map_err(|e| e.to_string());
        Some(match key {
            "depth" => value
                .parse::<u32>()
                .ok()
                .filter(|&d| d <= MAX_DEPTH)
                .map(|d| self.depth = d)
                .ok_or_else(|| format!("expected 0 to {MAX_DEPTH} levels")),
            "width" => n().map(|w| self.width = w),
            "files" => n().map(|f| self.files = f),
            "mkdir" if value == "parents" => {
                self.make_anchor = true;
                Ok(())
            }
            "mkdir" => Err("expected parents (make the anchor and its parents)".into()),
            "total" => super::units::parse_size(value)
                .map(|b| self.total_bytes = Some(b))
                .map_err(|e| e.to_string()),
            "dist" if value == "all" => {
                self.in_all_dirs = true;
                Ok(())
            }
            "dist" if value == "bottom" => Ok(()),
            "dist" => Err("expected all (files in every directory) or bottom".into()),
            "share" => value
                .split_once('/')
                .and_then(|(j, n)| Some((j.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
                .filter(|&(j, n)| j < n)
                .map(|s| self.share = Some(s))
                .ok_or_else(|| "expected J/N with J below N (host J of N)".into()),
            "wss" => super::units::parse_size(value)
                .map(|b| self.wss_bytes = Some(b))
                .map_err(|e| e.to_string()),
            _ => return None,
        })
    }

    /// The query part of the URI (`depth=…&width=…&files=…[&mkdir=parents]`).
    pub fn query(&self) -> String {
        let mkdir = if self.make_anchor {
            "&mkdir=parents"
        } else {
            ""
        };
        let mut extra = if self.in_all_dirs { "&dist=all" } else { "" }.to_string();
        if let Some((j, n)) = self.share {
            extra.push_str(&format!("&share={j}/{n}"));
        }
        let total = [("total", self.total_bytes), ("wss", self.wss_bytes)]
            .iter()
            .filter_map(|(k, b)| b.map(|b| format!("&{k}={b}")))
            .collect::<String>();
        format!(
            "depth={}&width={}&files={}{mkdir}{extra}{total}",
            self.depth, self.width, self.files
        )
    }
}

impl Default for TreeShape {
    /// vdbench's fsd defaults: one level of one directory, one file.
    fn default() -> Self {
        TreeShape {
            depth: 1,
            width: 1,
            files: 1,
            make_anchor: false,
            total_bytes: None,
            wss_bytes: None,
            in_all_dirs: false,
            share: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_vdbench_lays_them_out() {
        let t = TreeShape {
            depth: 2,
            width: 3,
            files: 2,
            make_anchor: false,
            total_bytes: None,
            wss_bytes: None,
            in_all_dirs: false,
            share: None,
        };
        assert_eq!(t.file_count(), Some(18));
        assert_eq!(t.dir_count(), 12);
        assert_eq!(t.file_name(0), "vdb.1_1.dir/vdb.2_1.dir/vdb_f0001.file");
        assert_eq!(t.file_name(1), "vdb.1_1.dir/vdb.2_1.dir/vdb_f0002.file");
        // vdbench's order: every parent's first directory, then every second, …
        assert_eq!(t.file_name(2), "vdb.1_2.dir/vdb.2_1.dir/vdb_f0001.file");
        assert_eq!(t.file_name(6), "vdb.1_1.dir/vdb.2_2.dir/vdb_f0001.file");
        assert_eq!(t.file_name(17), "vdb.1_3.dir/vdb.2_3.dir/vdb_f0002.file");
        let dirs: Vec<String> = t.dirs().collect();
        assert_eq!(dirs[0], "vdb.1_1.dir");
        assert_eq!(dirs[3], "vdb.1_1.dir/vdb.2_1.dir");
        assert_eq!(dirs[4], "vdb.1_2.dir/vdb.2_1.dir");
        assert_eq!(dirs[11], "vdb.1_3.dir/vdb.2_3.dir");
        let deep = TreeShape { depth: 3, ..t };
        // Level 3, rank 1: own number 1, parents (1_1/2_1) then (1_1/2_2)…: the
        // second parent in depth-first order.
        assert_eq!(deep.dir_path(3, 1), "vdb.1_1.dir/vdb.2_2.dir/vdb.3_1.dir");
        assert_eq!(deep.dir_path(3, 9), "vdb.1_1.dir/vdb.2_1.dir/vdb.3_2.dir");
        // distribution=all: files in every directory, the first level's first.
        let all = TreeShape {
            in_all_dirs: true,
            ..t
        };
        assert_eq!(all.file_count(), Some(24));
        assert_eq!(all.file_name(0), "vdb.1_1.dir/vdb_f0001.file");
        assert_eq!(all.file_name(5), "vdb.1_3.dir/vdb_f0002.file");
        assert_eq!(all.file_name(6), "vdb.1_1.dir/vdb.2_1.dir/vdb_f0001.file");
        assert_eq!(all.file_name(23), "vdb.1_3.dir/vdb.2_3.dir/vdb_f0002.file");
        let flat = TreeShape {
            depth: 0,
            width: 5,
            files: 3,
            make_anchor: false,
            total_bytes: None,
            wss_bytes: None,
            in_all_dirs: false,
            share: None,
        };
        assert_eq!((flat.file_count(), flat.dir_count()), (Some(3), 0));
        assert_eq!(flat.file_name(2), "vdb_f0003.file");
    }

    #[test]
    fn refuses_bad_shapes() {
        let mut t = TreeShape::default();
        assert!(matches!(t.take("depth", "33"), Some(Err(_))));
        assert!(matches!(t.take("width", "0"), Some(Err(_))));
        assert!(t.take("size", "1k").is_none());
        assert!(matches!(t.take("mkdir", "yes"), Some(Err(_))));
        assert!(matches!(t.take("mkdir", "parents"), Some(Ok(()))));
        assert!(t.make_anchor && t.query().ends_with("&mkdir=parents"));
        let huge = TreeShape {
            depth: 32,
            width: 1000,
            files: 1,
            make_anchor: false,
            total_bytes: None,
            wss_bytes: None,
            in_all_dirs: false,
            share: None,
        };
        assert_eq!(huge.file_count(), None);
    }
}
