//! NBD's fixed-newstyle handshake as a pure state machine over bytes, for the
//! engine's own client ([`super::wire`]): the server's greeting, `NBD_OPT_GO` for
//! the export (falling back to `NBD_OPT_EXPORT_NAME` on a server that does not know
//! it), and the server's answers, until transmission starts. No I/O here: the caller
//! feeds what arrived and sends what [`Handshake::step`] queued, so the same code
//! serves a blocking open and a reconnect driven from the worker's poll loop.
//!
//! The client asks for no structured replies, so the server answers every request
//! with a simple reply; it asks for no extra information (the export's size and
//! flags were learnt when the target was opened).

/// The server's first eight bytes.
const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// The newstyle greeting's second magic, and the magic of every option request.
const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// The second magic of an oldstyle server.
const OLDSTYLE: u64 = 0x0000_4202_8186_1253;
/// The magic of an option reply.
const OPT_REPLY: u64 = 0x0003_e889_0455_65a9;
const FLAG_FIXED_NEWSTYLE: u16 = 1;
const FLAG_NO_ZEROES: u16 = 2;
const OPT_EXPORT_NAME: u32 = 1;
const OPT_GO: u32 = 7;
const REP_ACK: u32 = 1;
const REP_ERR: u32 = 1 << 31;
const REP_ERR_UNSUP: u32 = REP_ERR | 1;
/// The longest option reply accepted (the spec bounds strings at 4 KiB; info
/// replies are a few bytes).
const MAX_REPLY_BYTES: usize = 64 * 1024;

/// Where the handshake stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    /// Waiting for the server's 18-byte greeting.
    Greeting,
    /// `NBD_OPT_GO` sent: reading option replies until the acknowledgement.
    Go { no_zeroes: bool },
    /// `NBD_OPT_EXPORT_NAME` sent: reading the export's size and flags.
    ExportName { no_zeroes: bool },
    /// Transmission: requests may be sent.
    Done,
}

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().expect("8 bytes"))
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().expect("4 bytes"))
}

/// Appends one option request for `export` to `out`; `GO` adds an empty list of
/// information requests.
fn option(out: &mut Vec<u8>, opt: u32, export: &[u8]) {
    let go = opt == OPT_GO;
    let len = export.len() + if go { 6 } else { 0 };
    out.extend_from_slice(&IHAVEOPT.to_be_bytes());
    out.extend_from_slice(&opt.to_be_bytes());
    out.extend_from_slice(&(len as u32).to_be_bytes());
    if go {
        out.extend_from_slice(&(export.len() as u32).to_be_bytes());
    }
    out.extend_from_slice(export);
    if go {
        out.extend_from_slice(&0u16.to_be_bytes());
    }
}

/// What an option error reply means, in words.
fn refusal(ty: u32) -> &'static str {
    match ty & !REP_ERR {
        2 => "the server's policy forbids it",
        3 => "the server found the request invalid",
        4 => "not supported on the server's platform",
        5 => "the server requires TLS, which ioscope's NBD client does not speak",
        6 => "no such export",
        7 => "the server is shutting down",
        8 => "the server requires block size negotiation",
        9 => "the request is too big",
        _ => "an error",
    }
}

impl Handshake {
    /// Consumes what it can of `input` (bytes received, in order) and appends what
    /// to send to `out`; returns the bytes consumed. Call again with the rest once
    /// more has arrived, until the state is [`Handshake::Done`]. `Err`: the server
    /// is not an NBD server of the kind spoken here, or refused the export.
    pub fn step(
        &mut self,
        input: &[u8],
        export: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, String> {
        let mut used = 0;
        loop {
            let avail = &input[used..];
            let n = match *self {
                Handshake::Done => return Ok(used),
                Handshake::Greeting => self.greeting(avail, export, out)?,
                Handshake::Go { no_zeroes } => self.go_reply(avail, export, no_zeroes, out)?,
                Handshake::ExportName { no_zeroes } => {
                    let need = 10 + if no_zeroes { 0 } else { 124 };
                    if avail.len() < need {
                        0
                    } else {
                        *self = Handshake::Done;
                        need
                    }
                }
            };
            if n == 0 {
                return Ok(used);
            }
            used += n;
        }
    }

    fn greeting(&mut self, b: &[u8], export: &[u8], out: &mut Vec<u8>) -> Result<usize, String> {
        if b.len() < 16 {
            return Ok(0);
        }
        if be64(b) != NBDMAGIC {
            return Err("the server did not greet as an NBD server".into());
        }
        match be64(&b[8..]) {
            IHAVEOPT => {}
            OLDSTYLE => {
                return Err("the server speaks NBD's oldstyle handshake, which ioscope's NBD client does not (nbdkit: drop --oldstyle)".into())
            }
            m => return Err(format!("unknown NBD greeting {m:#x}")),
        }
        if b.len() < 18 {
            return Ok(0);
        }
        let flags = u16::from_be_bytes([b[16], b[17]]);
        if flags & FLAG_FIXED_NEWSTYLE == 0 {
            return Err("the server does not speak NBD's fixed-newstyle handshake".into());
        }
        let no_zeroes = flags & FLAG_NO_ZEROES != 0;
        let client = FLAG_FIXED_NEWSTYLE as u32 | if no_zeroes { FLAG_NO_ZEROES as u32 } else { 0 };
        out.extend_from_slice(&client.to_be_bytes());
        option(out, OPT_GO, export);
        *self = Handshake::Go { no_zeroes };
        Ok(18)
    }

    fn go_reply(
        &mut self,
        b: &[u8],
        export: &[u8],
        no_zeroes: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize, String> {
        if b.len() < 20 {
            return Ok(0);
        }
        if be64(b) != OPT_REPLY {
            return Err("the server's option reply has a bad magic".into());
        }
        let (ty, len) = (be32(&b[12..]), be32(&b[16..]) as usize);
        if len > MAX_REPLY_BYTES {
            return Err(format!("an option reply of {len} bytes"));
        }
        if b.len() < 20 + len {
            return Ok(0);
        }
        match ty {
            REP_ACK => *self = Handshake::Done,
            REP_ERR_UNSUP => {
                option(out, OPT_EXPORT_NAME, export);
                *self = Handshake::ExportName { no_zeroes };
            }
            t if t & REP_ERR != 0 => {
                let said = String::from_utf8_lossy(&b[20..20 + len]);
                let name = String::from_utf8_lossy(export);
                let said = if said.trim().is_empty() {
                    String::new()
                } else {
                    format!(" ({})", said.trim())
                };
                return Err(format!(
                    "the server refused export '{name}': {}{said}",
                    refusal(t)
                ));
            }
            // NBD_REP_INFO and anything else informational: nothing to keep.
            _ => {}
        }
        Ok(20 + len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn greeting(flags: u16) -> Vec<u8> {
        let mut g = NBDMAGIC.to_be_bytes().to_vec();
        g.extend_from_slice(&IHAVEOPT.to_be_bytes());
        g.extend_from_slice(&flags.to_be_bytes());
        g
    }

    fn reply(ty: u32, data: &[u8]) -> Vec<u8> {
        let mut r = OPT_REPLY.to_be_bytes().to_vec();
        r.extend_from_slice(&OPT_GO.to_be_bytes());
        r.extend_from_slice(&ty.to_be_bytes());
        r.extend_from_slice(&(data.len() as u32).to_be_bytes());
        r.extend_from_slice(data);
        r
    }

    #[test]
    fn go_is_sent_after_the_greeting_and_the_ack_ends_it_even_byte_by_byte() {
        let mut input = greeting(3);
        input.extend(reply(3, &[0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 1]));
        input.extend(reply(REP_ACK, &[]));
        let mut h = Handshake::Greeting;
        let mut out = Vec::new();
        let mut fed = 0;
        // One more byte at a time: every partial message is left for later.
        for end in 1..=input.len() {
            fed += h.step(&input[fed..end], b"disk", &mut out).unwrap();
        }
        assert_eq!((h, fed), (Handshake::Done, input.len()));
        let mut want = 3u32.to_be_bytes().to_vec();
        option(&mut want, OPT_GO, b"disk");
        assert_eq!(out, want);
        assert_eq!(&out[4 + 16..4 + 20], &4u32.to_be_bytes(), "name length");
        assert_eq!(&out[out.len() - 6..], b"disk\0\0", "no info requests");
    }

    #[test]
    fn a_server_without_go_gets_export_name() {
        let mut h = Handshake::Greeting;
        let mut out = Vec::new();
        let mut input = greeting(1);
        input.extend(reply(REP_ERR_UNSUP, &[]));
        assert_eq!(h.step(&input, b"", &mut out).unwrap(), input.len());
        assert_eq!(h, Handshake::ExportName { no_zeroes: false });
        assert_eq!(be32(&out[out.len() - 8..]), OPT_EXPORT_NAME);
        // Size, flags and 124 zeroes.
        assert_eq!(h.step(&[0; 133], b"", &mut out).unwrap(), 0);
        assert_eq!(h.step(&[0; 134], b"", &mut out).unwrap(), 134);
        assert_eq!(h, Handshake::Done);
    }

    #[test]
    fn refusals_and_strangers_are_named() {
        let mut input = greeting(3);
        input.extend(reply(REP_ERR | 6, b"export 'x' not found"));
        let e = Handshake::Greeting
            .step(&input, b"x", &mut Vec::new())
            .unwrap_err();
        assert!(
            e.contains("refused export 'x': no such export (export 'x' not found)"),
            "{e}"
        );
        let mut old = NBDMAGIC.to_be_bytes().to_vec();
        old.extend_from_slice(&OLDSTYLE.to_be_bytes());
        let e = Handshake::Greeting
            .step(&old, b"", &mut Vec::new())
            .unwrap_err();
        assert!(e.contains("oldstyle"), "{e}");
        let e = Handshake::Greeting
            .step(b"HTTP/1.1 400 Bad Request\r\n", b"", &mut Vec::new())
            .unwrap_err();
        assert!(e.contains("not greet"), "{e}");
        let e = Handshake::Greeting
            .step(&greeting(0), b"", &mut Vec::new())
            .unwrap_err();
        assert!(e.contains("fixed-newstyle"), "{e}");
    }
}
