//! Transfer sizes: one size or a weighted split, per direction. One type for the
//! plan and the result's echo; the trade-off is a lenient reader (a bare number of
//! bytes is one size, as results written before the split existed have it), so a
//! malformed value is reported against both spellings.

use super::op::Op;
use serde::{Deserialize, Serialize};

/// Transfer sizes: one size, or a weighted mix (fio's bssplit, vdbench's xfersize
/// distribution); writes (and trims) may have a list of their own (fio's `bs=R,W`,
/// `bssplit=R_LIST,W_LIST`). On the wire `{"split": [[bytes, weight], …]}`, with
/// `"write_split"` when writes have sizes of their own; reading also accepts a bare
/// number of bytes (one size), as older results wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "BlockSizesWire")]
pub struct BlockSizes {
    /// (bytes, weight) pairs; weights are relative. Every I/O's sizes, or the reads'
    /// when `write_split` is set.
    pub split: Vec<(u64, u32)>,
    /// The writes' and trims' (bytes, weight) pairs; `None` = `split`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_split: Option<Vec<(u64, u32)>>,
}

impl BlockSizes {
    pub fn fixed(bytes: u64) -> Self {
        BlockSizes::of(vec![(bytes, 100)])
    }
    /// One split for every direction.
    pub fn of(split: Vec<(u64, u32)>) -> Self {
        BlockSizes {
            split,
            write_split: None,
        }
    }
    /// A read split and a write split; one split when they are the same.
    pub fn per_direction(read: Vec<(u64, u32)>, write: Vec<(u64, u32)>) -> Self {
        let write_split = (write != read).then_some(write);
        BlockSizes {
            split: read,
            write_split,
        }
    }
    /// The (bytes, weight) pairs an I/O of `op` draws its size from.
    pub fn for_op(&self, op: Op) -> &[(u64, u32)] {
        match (op, &self.write_split) {
            (Op::Write | Op::Trim, Some(w)) => w,
            _ => &self.split,
        }
    }
    /// Every (bytes, weight) pair of every direction (a size may come twice).
    pub fn all(&self) -> impl Iterator<Item = &(u64, u32)> + '_ {
        self.split.iter().chain(self.write_split.iter().flatten())
    }
    pub fn max_bytes(&self) -> u64 {
        self.all().map(|&(b, _)| b).max().unwrap_or(0)
    }
    pub fn min_bytes(&self) -> u64 {
        self.all().map(|&(b, _)| b).min().unwrap_or(0)
    }
    /// The single size, when there is only one (in every direction).
    pub fn single(&self) -> Option<u64> {
        match (self.split.as_slice(), &self.write_split) {
            ([(b, _)], None) => Some(*b),
            ([(b, _)], Some(w)) if w.iter().all(|&(wb, _)| wb == *b) => Some(*b),
            _ => None,
        }
    }
    /// The first size of the split (0 when there is none): the one a single-size
    /// format such as fio's `bs` can show.
    pub fn first_bytes(&self) -> u64 {
        self.split.first().map_or(0, |&(b, _)| b)
    }
    /// Every size, in the order given (the reads', then the writes' own).
    pub fn sizes_bytes(&self) -> impl Iterator<Item = u64> + '_ {
        self.all().map(|&(b, _)| b)
    }
    /// Mean transfer size of `op`'s I/Os, weighted by frequency.
    pub fn mean_bytes_of(&self, op: Op) -> f64 {
        let split = self.for_op(op);
        let total: u64 = split.iter().map(|&(_, w)| w as u64).sum();
        if total == 0 {
            return 0.0;
        }
        split.iter().map(|&(b, w)| b as f64 * w as f64).sum::<f64>() / total as f64
    }
}

/// The two spellings [`BlockSizes`] is read from.
#[derive(Deserialize)]
#[serde(untagged)]
enum BlockSizesWire {
    Bytes(u64),
    Split {
        split: Vec<(u64, u32)>,
        #[serde(default)]
        write_split: Option<Vec<(u64, u32)>>,
    },
}

impl From<BlockSizesWire> for BlockSizes {
    fn from(w: BlockSizesWire) -> Self {
        match w {
            BlockSizesWire::Bytes(b) => BlockSizes::fixed(b),
            BlockSizesWire::Split { split, write_split } => BlockSizes { split, write_split },
        }
    }
}

impl Default for BlockSizes {
    /// 4 KiB, every I/O.
    fn default() -> Self {
        BlockSizes::fixed(4096)
    }
}
