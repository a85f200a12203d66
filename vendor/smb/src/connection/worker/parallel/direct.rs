//! ioscope patch: the receive loop's reading of one message, which puts a READ
//! response's data straight into the requester's sink ([`crate::read_sink`]) in
//! pieces through one reused buffer, verifying its signature as it goes (or, where
//! the signer has a faster whole-message path, AES-GMAC on graviola, the whole
//! message in that buffer, signed at once), instead of
//! reading the whole message into a new zeroed buffer that the message parser then
//! copies the data out of (twice, growing a vector) before the requester copies it
//! once more.

use super::backend_trait::MultiWorkerBackend;
use super::base::ParallelWorker;
use crate::connection::transformer::{TransformError, TransformPhase};
use crate::connection::worker::Worker;
use crate::msg_handler::{IncomingMessage, MessageForm};
use crate::read_sink::ReadSink;
use crate::session::MessageSigner;
use binrw::BinRead;
use smb_msg::{Command, Header, PlainResponse, ReadResponse, ResponseContent, Status};
use smb_transport::{IoVec, SmbTcpMessageHeader, SmbTransportRead};
use std::io::Cursor;
use std::sync::Arc;

/// A READ response's header and fixed part: where its data starts.
const HEAD: usize = Header::STRUCT_SIZE + 16;
/// The most data read from the socket in one piece.
const PIECE: usize = 256 << 10;

/// A READ response about to be received into its sink: the response as its
/// requester gets it (no data), and the signer that checks it on the way (`None`:
/// the transformer would not verify it).
struct DirectStart {
    message: PlainResponse,
    verifier: Option<MessageSigner>,
}

/// The header of a plain, successful, uncompounded READ response of `len` bytes
/// whose data directly follows its fixed part and runs to its end; `None` for
/// anything else (encrypted, compressed, an error, a compound, another command).
fn direct_read(head: &[u8; HEAD], len: usize) -> Option<Header> {
    if head[..4] != *b"\xfeSMB" {
        return None;
    }
    let header = Header::read_le(&mut Cursor::new(&head[..Header::STRUCT_SIZE])).ok()?;
    let fixed = &head[Header::STRUCT_SIZE..];
    let structure_size = u16::from_le_bytes([fixed[0], fixed[1]]);
    let data_offset = fixed[2] as usize;
    let data_length = u32::from_le_bytes(fixed[4..8].try_into().ok()?) as usize;
    let data_remaining = u32::from_le_bytes(fixed[8..12].try_into().ok()?);
    let plain_read = header.command == Command::Read
        && header.status == Status::Success as u32
        && header.next_command == 0
        && header.flags.server_to_redir();
    let whole = structure_size == 17
        && data_offset == HEAD
        && data_length > 0
        && data_length == len - HEAD
        && data_remaining == 0;
    (plain_read && whole).then_some(header)
}

impl<T> ParallelWorker<T>
where
    T: MultiWorkerBackend + std::fmt::Debug,
    T::AwaitingNotifier: std::fmt::Debug,
{
    /// Receives the next message from `rt` and hands it on; `scratch` is the
    /// loop's reused buffer for READ data on its way to a sink.
    pub(crate) async fn receive_one(
        self: &Arc<Self>,
        rt: &mut dyn SmbTransportRead,
        scratch: &mut Vec<u8>,
    ) -> crate::Result<()> {
        let mut th = [0u8; SmbTcpMessageHeader::SIZE];
        rt.receive_exact(&mut th).await?;
        let len = SmbTcpMessageHeader::read(&mut Cursor::new(th))?.stream_protocol_length as usize;
        if len <= HEAD || self.sinks_lock().is_empty() {
            let mut data = vec![0; len];
            rt.receive_exact(&mut data).await?;
            return self.incoming_data_callback(Ok(data)).await;
        }
        let mut head = [0u8; HEAD];
        rt.receive_exact(&mut head).await?;
        let direct = direct_read(&head, len).and_then(|h| {
            let sink = self.sinks_lock().remove(&h.message_id)?;
            (sink.capacity() >= len - HEAD).then_some((h, sink))
        });
        let direct = match direct {
            Some((header, sink)) => self.verifier_for(header).await.map(|m| (m, sink)),
            None => None,
        };
        let Some((start, sink)) = direct else {
            let mut data = Vec::with_capacity(len);
            data.extend_from_slice(&head);
            data.resize(len, 0);
            rt.receive_exact(&mut data[HEAD..]).await?;
            return self.incoming_data_callback(Ok(data)).await;
        };
        let id = start.message.header.message_id;
        let msg = self
            .receive_into(rt, scratch, start, &head, len - HEAD, &sink)
            .await?;
        self.deliver(id, msg).await
    }

    /// The READ response whose header is `header` with the signer that verifies it
    /// as the transformer would; `None` when that signer cannot be had now (no such
    /// session or channel on this connection, or the channel invalid): the response
    /// then takes the transformer's path, which reports that as it always did.
    async fn verifier_for(&self, header: Header) -> Option<DirectStart> {
        let message = PlainResponse {
            header,
            content: ResponseContent::Read(ReadResponse { buffer: Vec::new() }),
        };
        match self.transformer().incoming_verifier(&message).await {
            Ok(verifier) => Some(DirectStart { message, verifier }),
            Err(e) => {
                log::debug!(
                    "READ response #{} not received directly: {e}",
                    message.header.message_id
                );
                None
            }
        }
    }

    /// Reads the `n` bytes of data of the READ response `start`, whose first bytes
    /// are `head`, into `sink`, checking its signature with `start`'s verifier;
    /// returns the response as the requester receives it (its data in place).
    async fn receive_into(
        self: &Arc<Self>,
        rt: &mut dyn SmbTransportRead,
        scratch: &mut Vec<u8>,
        start: DirectStart,
        head: &[u8; HEAD],
        n: usize,
        sink: &ReadSink,
    ) -> crate::Result<crate::Result<IncomingMessage>> {
        let DirectStart {
            message,
            mut verifier,
        } = start;
        if let Some(v) = verifier.as_mut().filter(|v| v.signs_whole()) {
            // The whole message in one buffer, signed at once, then its data to the
            // sink: one copy, as the pieces below make, and a far faster tag.
            let whole = HEAD + n;
            if scratch.len() < whole {
                scratch.resize(whole, 0);
            }
            let msg = &mut scratch[..whole];
            msg[Header::STRUCT_SIZE..HEAD].copy_from_slice(&head[Header::STRUCT_SIZE..]);
            rt.receive_exact(&mut msg[HEAD..]).await?;
            let signature = v.sign_whole(&message.header, msg)?;
            sink.put(0, &msg[HEAD..]);
            return Ok(checked(message, head, n, signature));
        }
        if let Some(v) = &mut verifier {
            v.begin(&message.header)?;
            v.update(&head[Header::STRUCT_SIZE..]);
        }
        if scratch.len() < PIECE.min(n) {
            scratch.resize(PIECE.min(n), 0);
        }
        let mut at = 0;
        while at < n {
            let piece = &mut scratch[..PIECE.min(n - at)];
            rt.receive_exact(piece).await?;
            if let Some(v) = &mut verifier {
                v.update(piece);
            }
            // A closed sink (its request gave up) takes nothing: read on regardless.
            sink.put(at, piece);
            at += piece.len();
        }
        let signature = verifier.map(|mut v| v.finish());
        Ok(checked(message, head, n, signature))
    }
}

/// The READ response `message` whose first bytes are `head` and whose `n` bytes of
/// data are in its sink, as its requester receives it, once `signature` (what the
/// signer computed; `None`: not verified) matches the header's.
fn checked(
    message: PlainResponse,
    head: &[u8; HEAD],
    n: usize,
    signature: Option<u128>,
) -> crate::Result<IncomingMessage> {
    if signature.is_some_and(|s| s != message.header.signature) {
        log::error!(
            "Failed to verify incoming message #{}",
            message.header.message_id
        );
        return Err(crate::Error::TranformFailed(TransformError {
            outgoing: false,
            phase: TransformPhase::SignVerify,
            session_id: Some(message.header.session_id),
            why: "Failed to verify incoming message!",
            msg_id: Some(message.header.message_id),
        }));
    }
    let verified = signature.is_some();
    let form = MessageForm {
        signed: verified,
        ..Default::default()
    };
    let mut msg = IncomingMessage::new(message, IoVec::from(head.to_vec()), form);
    msg.direct_len = Some(n);
    Ok(msg)
}
