//! The network target URIs' shared pieces: why one was refused ([`UriError`]) and
//! the `HOST[:PORT]` reader that `nbd://`, `iscsi://` and `smb://` all use. Parsing
//! is pure (no I/O), so a typo is an input error located at the flag or job-file key.

/// Why a network target URI was refused. The scheme's parser says which form it
/// expects; nothing here echoes a password (URIs with credentials are refused before
/// anything else is read from them).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UriError {
    /// The URI does not have the scheme's shape; the text says what it should be.
    #[error("{0}")]
    Shape(&'static str),
    /// User names, passwords or query parameters where secrets do not belong; the
    /// text says where they go instead.
    #[error("{0}")]
    Secret(&'static str),
    /// A form of the protocol ioscope does not speak; the text names the alternative.
    #[error("{0}")]
    Unsupported(&'static str),
    #[error("no host in the URI")]
    NoHost,
    #[error("bad port '{0}': expected 1 to 65535")]
    Port(String),
    #[error("bad LUN '{0}': expected a number below 16384")]
    Lun(String),
    #[error("bad %-escape in '{0}'")]
    Escape(String),
    #[error("'{0}' is not UTF-8 once decoded")]
    Utf8(String),
    /// A file path with empty, `.` or `..` components (the path given).
    #[error("bad file path '{0}': no empty, '.' or '..' components")]
    FilePath(String),
}

/// `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT` (`default_port` when none is given).
pub fn split_host_port(authority: &str, default_port: u16) -> Result<(&str, u16), UriError> {
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or(UriError::Shape("unclosed '[' in the host"))?;
        match after {
            "" => (h, None),
            p => (
                h,
                Some(
                    p.strip_prefix(':')
                        .ok_or(UriError::Shape("expected ':PORT' after ']'"))?,
                ),
            ),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(UriError::NoHost);
    }
    let port = match port {
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| UriError::Port(p.to_string()))?,
    };
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_ports_and_their_errors() {
        assert_eq!(split_host_port("h", 7), Ok(("h", 7)));
        assert_eq!(split_host_port("h:9", 7), Ok(("h", 9)));
        assert_eq!(split_host_port("[::1]:9", 7), Ok(("::1", 9)));
        assert_eq!(split_host_port("[::1]", 7), Ok(("::1", 7)));
        assert_eq!(split_host_port(":9", 7), Err(UriError::NoHost));
        assert_eq!(split_host_port("h:0", 7), Err(UriError::Port("0".into())));
        assert_eq!(
            split_host_port("h:x", 7).unwrap_err().to_string(),
            "bad port 'x': expected 1 to 65535"
        );
        assert!(matches!(
            split_host_port("[::1", 7),
            Err(UriError::Shape(_))
        ));
        assert!(matches!(
            split_host_port("[::1]9", 7),
            Err(UriError::Shape(_))
        ));
    }
}
