//! The iSCSI login of the own initiator (RFC 7143 §6 and §13) as a state machine over
//! bytes: the security stage without authentication (CHAP sessions go through
//! libiscsi), then the operational stage, whose answers fix how much data a PDU may
//! carry and how a write's data goes (immediate, unsolicited, on R2T). No socket
//! here: [`Login::step`] takes received bytes and writes the next request.

use super::pdu::{self, In, Numbers, BHS};

/// The operational values the initiator asks for: no digests, data in the
/// command PDU and unsolicited, bursts as long as the target allows.
const OFFER: &[(&str, &str)] = &[
    ("HeaderDigest", "None"),
    ("DataDigest", "None"),
    ("InitialR2T", "No"),
    ("ImmediateData", "Yes"),
    ("MaxRecvDataSegmentLength", "262144"),
    ("MaxBurstLength", "16776192"),
    ("FirstBurstLength", "262144"),
    ("MaxConnections", "1"),
    ("MaxOutstandingR2T", "1"),
    ("ErrorRecoveryLevel", "0"),
    ("DataPDUInOrder", "Yes"),
    ("DataSequenceInOrder", "Yes"),
    ("DefaultTime2Wait", "2"),
    ("DefaultTime2Retain", "0"),
    ("IFMarker", "No"),
    ("OFMarker", "No"),
];
/// The data segment the initiator declares it can take.
pub const RECV_SEGMENT_BYTES: usize = 262_144;
/// Rounds of one stage before the login is given up (a target that never moves on).
const ROUNDS_MAX: u32 = 8;
const TRANSIT: u8 = 0x80;
const CONTINUE: u8 = 0x40;
const SECURITY: u8 = 0;
const OPERATIONAL: u8 = 1;
const FULL_FEATURE: u8 = 3;

/// What the operational stage settled (RFC 7143's defaults for keys the target
/// did not answer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreed {
    /// The longest data segment the target takes (its MaxRecvDataSegmentLength).
    pub send_segment_bytes: u32,
    pub first_burst_bytes: u32,
    pub max_burst_bytes: u32,
    pub immediate_data: bool,
    pub initial_r2t: bool,
}

const DEFAULTS: Agreed = Agreed {
    send_segment_bytes: 8192,
    first_burst_bytes: 65536,
    max_burst_bytes: 262_144,
    immediate_data: true,
    initial_r2t: true,
};

/// A session in full feature phase: the numbers its first command goes with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Established {
    pub agreed: Agreed,
    pub cmd_sn: u32,
    pub max_cmd_sn: u32,
    pub exp_stat_sn: u32,
}

/// A login under way.
pub struct Login {
    isid: [u8; 6],
    initiator: String,
    target: String,
    stage: u8,
    rounds: u32,
    tsih: u16,
    cmd_sn: u32,
    exp_stat_sn: u32,
    /// Text of a response the target continues (its C bit).
    text: Vec<u8>,
    agreed: Agreed,
}

impl Login {
    /// A login as `initiator` to `target`; its first request is written to `out`.
    pub fn start(isid: [u8; 6], initiator: &str, target: &str, out: &mut Vec<u8>) -> Login {
        let l = Login {
            isid,
            initiator: initiator.to_string(),
            target: target.to_string(),
            stage: SECURITY,
            rounds: 0,
            tsih: 0,
            cmd_sn: 1,
            exp_stat_sn: 0,
            text: Vec::new(),
            agreed: DEFAULTS,
        };
        let keys = [
            ("InitiatorName", l.initiator.as_str()),
            ("TargetName", l.target.as_str()),
            ("SessionType", "Normal"),
            ("AuthMethod", "None"),
        ];
        l.request(TRANSIT | OPERATIONAL, &keys, out);
        l
    }

    /// Writes a request of this stage asking for the next (`flags`: T and NSG).
    fn request(&self, flags: u8, keys: &[(&str, &str)], out: &mut Vec<u8>) {
        let mut text = Vec::new();
        for (k, v) in keys {
            text.extend_from_slice(format!("{k}={v}\0").as_bytes());
        }
        let n = Numbers {
            itt: 0,
            cmd_sn: self.cmd_sn,
            exp_stat_sn: self.exp_stat_sn,
        };
        let flags = flags | self.stage << 2;
        out.extend_from_slice(&pdu::login(
            flags,
            self.isid,
            self.tsih,
            n,
            text.len() as u32,
        ));
        let pad = pdu::pad(text.len());
        out.extend_from_slice(&text);
        out.resize(out.len() + pad, 0);
    }

    /// Takes one whole Login Response from the front of `rx`, if there is one, and
    /// writes the next request to `out`: the bytes it used, and the session once
    /// the login is over.
    pub fn step(
        &mut self,
        rx: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(usize, Option<Established>), String> {
        let Some(h) = rx.get(..BHS).map(In) else {
            return Ok((0, None));
        };
        if h.opcode() != pdu::OP_LOGIN_RSP {
            return Err(format!(
                "the target answered the login with opcode {:#04x}",
                h.opcode()
            ));
        }
        let data_at = BHS + h.ahs_bytes();
        let used = data_at + h.data_len() + pdu::pad(h.data_len());
        if rx.len() < used {
            return Ok((0, None));
        }
        let (class, detail) = h.login_status();
        if class != 0 {
            return Err(refusal(class, detail, &rx[data_at..data_at + h.data_len()]));
        }
        self.tsih = h.tsih();
        self.exp_stat_sn = h.stat_sn().wrapping_add(1);
        self.cmd_sn = h.exp_cmd_sn();
        self.text
            .extend_from_slice(&rx[data_at..data_at + h.data_len()]);
        self.rounds += 1;
        if self.rounds > ROUNDS_MAX {
            return Err("the target did not finish the login in 8 rounds".into());
        }
        let f = h.flags();
        if f & CONTINUE != 0 {
            // More text of this response to come: an empty request asks for it.
            self.request(0, &[], out);
            return Ok((used, None));
        }
        let text = std::mem::take(&mut self.text);
        self.answers(&text)?;
        if f & TRANSIT == 0 {
            // The target stays in this stage: ask again to move on.
            let next = if self.stage == SECURITY {
                OPERATIONAL
            } else {
                FULL_FEATURE
            };
            self.request(TRANSIT | next, &[], out);
            return Ok((used, None));
        }
        match f & 3 {
            OPERATIONAL => {
                self.stage = OPERATIONAL;
                self.rounds = 0;
                self.request(TRANSIT | FULL_FEATURE, OFFER, out);
                Ok((used, None))
            }
            FULL_FEATURE => Ok((
                used,
                Some(Established {
                    agreed: self.agreed,
                    cmd_sn: h.exp_cmd_sn(),
                    max_cmd_sn: h.max_cmd_sn(),
                    exp_stat_sn: self.exp_stat_sn,
                }),
            )),
            s => Err(format!("the target moved the login to stage {s}")),
        }
    }

    /// Applies the target's answers.
    fn answers(&mut self, text: &[u8]) -> Result<(), String> {
        for kv in text.split(|&b| b == 0).filter(|kv| !kv.is_empty()) {
            let kv = String::from_utf8_lossy(kv);
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            let num = || {
                v.parse::<u32>()
                    .map_err(|_| format!("the target answered {k}={v}"))
            };
            let a = &mut self.agreed;
            match k {
                "AuthMethod" if v != "None" => return Err(format!(
                    "the target requires authentication (AuthMethod={v}): set IOSCOPE_ISCSI_USER and IOSCOPE_ISCSI_PASSWORD or --credentials for CHAP"
                )),
                "HeaderDigest" | "DataDigest" if v != "None" => {
                    return Err(format!("the target insists on {k}={v}, which ioscope does not compute"))
                }
                "MaxRecvDataSegmentLength" => a.send_segment_bytes = num()?.max(512),
                "MaxBurstLength" => a.max_burst_bytes = num()?.max(512),
                "FirstBurstLength" => a.first_burst_bytes = num()?.max(512),
                "ImmediateData" => a.immediate_data = v == "Yes",
                "InitialR2T" => a.initial_r2t = v == "Yes",
                _ => {}
            }
        }
        Ok(())
    }
}

/// A refused login's message: RFC 7143's words for the status, and where the
/// target redirects to.
fn refusal(class: u8, detail: u8, text: &[u8]) -> String {
    let why = match (class, detail) {
        (1, _) => {
            let to = String::from_utf8_lossy(text)
                .split('\0')
                .find_map(|kv| kv.strip_prefix("TargetAddress=").map(str::to_string))
                .unwrap_or_default();
            return format!("the target redirects the login to {to}, which ioscope does not follow");
        }
        (2, 1) => "authentication failed (set IOSCOPE_ISCSI_USER and IOSCOPE_ISCSI_PASSWORD or --credentials for CHAP)",
        (2, 2) => "this initiator is not allowed to log in",
        (2, 3) => "no such target name at this portal",
        (2, 4) => "the target was removed",
        (2, 6) => "too many connections",
        (2, _) => "initiator error",
        (3, 1) => "the target's service is unavailable",
        (3, 2) => "the target is out of resources",
        (3, _) => "target error",
        _ => "unknown status",
    };
    format!("login refused: {why} (status {class:#04x}{detail:02x})")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Login Response with `flags` (T, C, CSG, NSG), status and text.
    fn response(flags: u8, status: (u8, u8), text: &str) -> Vec<u8> {
        let mut h = [0u8; BHS];
        h[0] = pdu::OP_LOGIN_RSP;
        h[1] = flags;
        h[5..8].copy_from_slice(&(text.len() as u32).to_be_bytes()[1..]);
        h[14..16].copy_from_slice(&9u16.to_be_bytes());
        h[24..28].copy_from_slice(&41u32.to_be_bytes());
        h[28..32].copy_from_slice(&5u32.to_be_bytes());
        h[32..36].copy_from_slice(&36u32.to_be_bytes());
        (h[36], h[37]) = status;
        let mut v = h.to_vec();
        v.extend_from_slice(text.as_bytes());
        v.resize(v.len() + pdu::pad(text.len()), 0);
        v
    }

    fn text_of(req: &[u8]) -> String {
        String::from_utf8_lossy(&req[BHS..BHS + In(req).data_len()]).replace('\0', " ")
    }

    #[test]
    fn security_then_operational_then_full_feature_even_byte_by_byte() {
        let mut out = Vec::new();
        let mut l = Login::start([0x80, 1, 2, 3, 0, 1], "iqn.i", "iqn.t", &mut out);
        assert_eq!(out[0], 0x43, "an immediate Login Request");
        assert_eq!(out[1], 0x81, "T, security stage, next operational");
        assert_eq!(&out[8..14], &[0x80, 1, 2, 3, 0, 1]);
        let t = text_of(&out);
        assert_eq!(
            t,
            "InitiatorName=iqn.i TargetName=iqn.t SessionType=Normal AuthMethod=None "
        );
        let r = response(0x81, (0, 0), "TargetPortalGroupTag=1\0AuthMethod=None\0");
        out.clear();
        for end in 0..r.len() {
            assert_eq!(l.step(&r[..end], &mut out).unwrap(), (0, None), "a part");
        }
        assert_eq!(l.step(&r, &mut out).unwrap().0, r.len());
        assert_eq!(out[1], 0x87, "T, operational stage, next full feature");
        assert_eq!(&out[14..16], &[0, 9], "the target's TSIH");
        assert_eq!(In(&out).stat_sn(), 5, "CmdSN as the target expects it");
        assert!(text_of(&out).contains("ImmediateData=Yes"));
        let declared = format!("MaxRecvDataSegmentLength={RECV_SEGMENT_BYTES}");
        assert!(text_of(&out).contains(&declared));
        let r = response(
            0x87,
            (0, 0),
            "MaxRecvDataSegmentLength=8192\0InitialR2T=Yes\0ImmediateData=Yes\0MaxBurstLength=262144\0FirstBurstLength=65536\0HeaderDigest=None\0",
        );
        out.clear();
        let (used, done) = l.step(&r, &mut out).unwrap();
        assert_eq!(used, r.len());
        let e = done.expect("full feature phase");
        assert_eq!((e.cmd_sn, e.max_cmd_sn, e.exp_stat_sn), (5, 36, 42));
        assert_eq!(e.agreed.send_segment_bytes, 8192);
        assert!(e.agreed.initial_r2t && e.agreed.immediate_data);
        assert!(out.is_empty());
    }

    #[test]
    fn refusals_and_demands_are_named() {
        let mut out = Vec::new();
        let mut l = Login::start([0x80, 0, 0, 0, 0, 1], "i", "t", &mut out);
        let e = l.step(&response(0, (2, 3), ""), &mut out).unwrap_err();
        assert!(e.contains("no such target name"), "{e}");
        let mut l = Login::start([0x80, 0, 0, 0, 0, 1], "i", "t", &mut out);
        let e = l
            .step(&response(0x81, (0, 0), "AuthMethod=CHAP\0"), &mut out)
            .unwrap_err();
        assert!(e.contains("IOSCOPE_ISCSI_USER"), "{e}");
        let mut l = Login::start([0x80, 0, 0, 0, 0, 1], "i", "t", &mut out);
        let e = l
            .step(
                &response(0, (1, 1), "TargetAddress=10.0.0.9:3260,1\0"),
                &mut out,
            )
            .unwrap_err();
        assert!(e.contains("10.0.0.9:3260"), "{e}");
    }

    #[test]
    fn a_target_that_stays_in_a_stage_is_asked_again() {
        let mut out = Vec::new();
        let mut l = Login::start([0x80, 0, 0, 0, 0, 1], "i", "t", &mut out);
        out.clear();
        l.step(&response(0x00, (0, 0), ""), &mut out).unwrap();
        assert_eq!(out[1], 0x81, "T again, still security");
        assert_eq!(In(&out).data_len(), 0);
    }
}
