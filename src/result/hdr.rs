//! The text form of a raw latency histogram in a result (`totals.read.hdr` and the
//! like): HdrHistogram's standard V2 compressed encoding (deflate), as base64, values
//! in nanoseconds. Any HdrHistogram implementation decodes it (Java's
//! `Histogram.decodeFromCompressedByteBuffer`, Python's `HdrHistogram.decode`, the
//! Rust crate's `Deserializer`), and the interval log (`--hdr-log`) carries the same
//! text on each line.
//!
//! The encoding holds the bucket counts only. ioscope's exact moments (min, max,
//! mean, standard deviation) stay in the summary beside it, so a merge takes those
//! from the summaries and the percentiles from the summed buckets.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// What went wrong with an encoded histogram.
#[derive(Debug, thiserror::Error)]
pub enum HdrError {
    #[error("the histogram is not base64 text")]
    Base64(#[source] base64::DecodeError),
    #[error("the histogram is not in HdrHistogram's V2 encoding")]
    Decode(#[source] hdrhistogram::serialization::DeserializeError),
    #[error("the histogram could not be encoded")]
    Encode(#[source] hdrhistogram::serialization::V2DeflateSerializeError),
}

/// `h` in HdrHistogram's V2 deflate encoding, as base64.
pub fn encode(h: &Histogram<u64>) -> Result<String, HdrError> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .map_err(HdrError::Encode)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The histogram [`encode`] wrote (or any V2 encoding, compressed or not, as base64).
pub fn decode(text: &str) -> Result<Histogram<u64>, HdrError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(HdrError::Base64)?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(HdrError::Decode)
}

/// The non-empty buckets of `h` as (value in ns, count), lowest first: each bucket
/// named by the middle of the values it holds, as fio's json+ `bins` name theirs.
pub fn bins_ns(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| {
            (
                h.median_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_bad_text_is_refused() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in [1u64, 2, 999, 1_000, 1_234_567, 3_600_000_000_000] {
            h.record_n(v, v % 7 + 1).unwrap();
        }
        let text = encode(&h).unwrap();
        let back = decode(&text).unwrap();
        assert_eq!(back, h);
        assert_eq!(
            bins_ns(&back).iter().map(|b| b.1).sum::<u64>(),
            h.len(),
            "every count is in a bin"
        );
        assert!(matches!(decode("not base64!"), Err(HdrError::Base64(_))));
        assert!(matches!(decode("AAAAAAAA"), Err(HdrError::Decode(_))));
    }
}
