//! The Device Identification VPD page (INQUIRY EVPD page 0x83, SPC-4 §7.8.6): the
//! names a logical unit gives itself. Two iSCSI paths lead to the same LUN exactly
//! when the LUN reports the same logical-unit designators on both; the port and
//! target designators of the page differ per path by design and are left out.
//!
//! The page is parsed from its raw bytes here rather than through libiscsi's
//! unmarshalled structs, whose layout (C enums, a linked list) is not worth binding.

/// INQUIRY page code of the Device Identification page.
pub const PAGE_DEVICE_ID: u8 = 0x83;
/// Bytes asked for: enough for the designators of any real target (the page says
/// its own length; a longer page is cut, and what is read is still compared).
pub const PAGE_MAX_BYTES: usize = 1024;

/// The kind of a logical-unit designator (the page's "designator type").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DesignatorKind {
    /// NAA (type 3): world-wide unique, the strongest.
    Naa,
    /// EUI-64 (type 2).
    Eui64,
    /// SCSI name string (type 8).
    ScsiName,
    /// T10 vendor ID based (type 1): vendor plus a vendor-specific serial.
    T10,
}

/// One logical-unit designator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Designator {
    pub kind: DesignatorKind,
    pub bytes: Vec<u8>,
}

impl Designator {
    /// Sort key: NAA before EUI-64 before SCSI name before T10, and among NAA the
    /// registered formats (6, 5) before IEEE extended (2) and locally assigned (3).
    fn strength(&self) -> (DesignatorKind, u8) {
        let naa_rank = match self.bytes.first().map(|b| b >> 4) {
            Some(6) => 0,
            Some(5) => 1,
            Some(2) => 2,
            _ => 3,
        };
        match self.kind {
            DesignatorKind::Naa => (self.kind, naa_rank),
            k => (k, 0),
        }
    }

    /// The usual text form: `naa.` / `eui.` + hex, `t10.` / the SCSI name as text.
    pub fn display(&self) -> String {
        let hex = || -> String { self.bytes.iter().map(|b| format!("{b:02x}")).collect() };
        let text = || {
            String::from_utf8_lossy(&self.bytes)
                .trim_end_matches(['\0', ' '])
                .to_string()
        };
        match self.kind {
            DesignatorKind::Naa => format!("naa.{}", hex()),
            DesignatorKind::Eui64 => format!("eui.{}", hex()),
            DesignatorKind::ScsiName => text(),
            DesignatorKind::T10 => format!("t10.{}", text()),
        }
    }
}

/// The logical unit's identity: its designators, sorted (strongest kind first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceId {
    pub designators: Vec<Designator>,
}

impl DeviceId {
    /// The strongest designator's text form (what the result records).
    pub fn primary(&self) -> Option<String> {
        self.designators.first().map(Designator::display)
    }

    /// All designators as text, strongest first, `, `-separated (for messages).
    pub fn describe(&self) -> String {
        let all: Vec<String> = self.designators.iter().map(Designator::display).collect();
        all.join(", ")
    }
}

/// What is malformed in a Device Identification page.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum VpdError {
    #[error("the page is {0} bytes, shorter than its header")]
    Short(usize),
    #[error("page code {0:#04x} where 0x83 was asked for")]
    PageCode(u8),
}

/// Parses a Device Identification page. `Err` says what is malformed; a page with
/// no logical-unit designator of a known kind gives an empty [`DeviceId`].
pub fn parse(page: &[u8]) -> Result<DeviceId, VpdError> {
    if page.len() < 4 {
        return Err(VpdError::Short(page.len()));
    }
    if page[1] != PAGE_DEVICE_ID {
        return Err(VpdError::PageCode(page[1]));
    }
    let page_len = u16::from_be_bytes([page[2], page[3]]) as usize;
    let body = &page[4..(4 + page_len).min(page.len())];
    let mut designators = Vec::new();
    let mut at = 0;
    while at + 4 <= body.len() {
        let d = &body[at..];
        let len = d[3] as usize;
        if 4 + len > d.len() {
            // A page cut by the allocation length: the designator is incomplete.
            break;
        }
        let association = (d[1] >> 4) & 0x3;
        let kind = match d[1] & 0xf {
            1 => Some(DesignatorKind::T10),
            2 => Some(DesignatorKind::Eui64),
            3 => Some(DesignatorKind::Naa),
            8 => Some(DesignatorKind::ScsiName),
            _ => None,
        };
        if let (0, Some(kind)) = (association, kind) {
            designators.push(Designator {
                kind,
                bytes: d[4..4 + len].to_vec(),
            });
        }
        at += 4 + len;
    }
    designators.sort_by(|a, b| (a.strength(), &a.bytes).cmp(&(b.strength(), &b.bytes)));
    designators.dedup();
    Ok(DeviceId { designators })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page as tgtd 1.0.85 sends it for tid 1, LUN 1 (two NAA, one T10), plus a
    /// target-port designator (association 1) that must be ignored.
    fn page(t10: &[u8]) -> Vec<u8> {
        let mut body = vec![];
        body.extend([0x01, 0x03, 0x00, 0x08]);
        body.extend([0x60, 0, 0, 0, 0, 0, 0, 1]);
        body.extend([0x01, 0x03, 0x00, 0x08]);
        body.extend([0x30, 0, 0, 0, 0, 0, 0, 2]);
        body.extend([0x02, 0x01, 0x00, t10.len() as u8]);
        body.extend(t10);
        body.extend([0x51, 0x94, 0x00, 0x04, 0, 0, 0, 1]);
        let mut p = vec![0x00, 0x83];
        p.extend((body.len() as u16).to_be_bytes());
        p.extend(body);
        p
    }

    #[test]
    fn logical_unit_designators_strongest_first_ports_ignored() {
        let id = parse(&page(b"IET     00010001")).unwrap();
        assert_eq!(id.designators.len(), 3);
        assert_eq!(id.designators[0].kind, DesignatorKind::Naa);
        assert_eq!(id.designators[2].kind, DesignatorKind::T10);
        assert_eq!(
            id.designators[2].display(),
            "t10.IET     00010001".to_string()
        );
        assert_eq!(id.primary().unwrap(), "naa.6000000000000001");
    }

    #[test]
    fn the_same_lun_is_equal_and_another_differs() {
        let a = parse(&page(b"IET     00010001")).unwrap();
        assert_eq!(a, parse(&page(b"IET     00010001")).unwrap());
        assert_ne!(a, parse(&page(b"IET     00020001")).unwrap());
    }

    #[test]
    fn malformed_or_cut_pages() {
        assert_eq!(parse(&[0, 0x83]), Err(VpdError::Short(2)));
        assert!(parse(&[0, 0x83])
            .unwrap_err()
            .to_string()
            .contains("shorter"));
        assert!(parse(&[0, 0x80, 0, 0])
            .unwrap_err()
            .to_string()
            .contains("0x80"));
        // Cut inside the T10 designator: the complete ones are kept.
        let p = page(b"IET     00010001");
        let id = parse(&p[..30]).unwrap();
        assert_eq!(id.designators.len(), 2);
        assert!(parse(&[0, 0x83, 0, 0]).unwrap().designators.is_empty());
    }
}
