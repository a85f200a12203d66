//! What an SMB session negotiated, recorded with each run that used `smb://` targets:
//! the numbers of an SMB benchmark mean little without the dialect, signing and
//! encryption they were measured under. Kept apart from the main result types so the
//! SMB client is the only place that fills it in. Never holds a user's password.

use serde::{Deserialize, Serialize};

/// One SMB session to a server (the one opened to inspect the target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmbSession {
    /// The target URI (no password can be in it).
    pub target: String,
    /// `HOST:PORT`.
    pub server: String,
    /// The account the session authenticated as.
    pub user: String,
    /// Negotiated dialect: "2.0.2", "2.1", "3.0", "3.0.2" or "3.1.1".
    pub dialect: String,
    /// Messages are signed (always, for an authenticated non-guest session).
    pub signed: bool,
    /// The signing algorithm: "HMAC-SHA256", "AES-CMAC" or "AES-GMAC".
    pub signing_algorithm: String,
    /// `--smb-encrypt` was given, so every message of the session is encrypted; false
    /// means encryption was left to the server (the client does not report whether the
    /// server turned it on for the session).
    pub encryption_required: bool,
    /// The cipher negotiated for encryption, when one was (SMB 3.1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption_cipher: Option<String>,
    /// Credits the client asks the server to keep granted: the ceiling on requests in
    /// flight per connection.
    pub credits_requested: u16,
    /// Credits the server had granted the session's connection once the target was
    /// opened (after NEGOTIATE, log-on, TREE_CONNECT, CREATE and a size query): what
    /// the first requests of a run can have in flight before later grants raise it.
    #[serde(default)]
    pub credits_granted: u16,
    /// Largest read and write the server accepts in one request.
    pub max_read_bytes: u32,
    pub max_write_bytes: u32,
    /// Channels bound to the session.
    pub channels: u32,
}
