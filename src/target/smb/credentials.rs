//! Where an SMB password comes from, and how it is kept out of everything ioscope
//! writes. Two sources only: `IOSCOPE_SMB_USER`/`IOSCOPE_SMB_PASSWORD`, or a
//! `--credentials FILE` in smbclient's authentication-file format (`username = …`,
//! `password = …`, optional `domain = …`) that only its owner may read (mode 0600 or
//! stricter). Never the command line, never a URI. The password lives in a
//! [`Password`] whose `Debug` prints nothing.
//!
//! The command line's choices (`--credentials`, `--smb-encrypt`) are set once per
//! process with [`configure`]; targets read them when they open.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The password, printed as `<redacted>`.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// The secret itself, for the authentication call only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// A user name (possibly `DOMAIN\user`) and its password.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub user: String,
    pub password: Password,
}

impl Credentials {
    /// Credentials given by a caller that holds them already (a library user, a
    /// test); ioscope's own targets take theirs from [`resolve`].
    pub fn new(user: &str, password: String) -> Credentials {
        Credentials {
            user: user.to_string(),
            password: Password(password),
        }
    }
}

/// The SMB choices made on the command line.
#[derive(Debug, Clone, Default)]
pub struct SmbOptions {
    pub credentials_file: Option<PathBuf>,
    /// `--smb-encrypt`: refuse a session the server does not encrypt.
    pub require_encryption: bool,
}

/// Why no credentials could be had: a `--credentials` file that cannot be used (named
/// with its path, and its line where one is at fault), or nothing to take them from.
/// Never holds the password.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// The file cannot be looked at or read.
    #[error("--credentials '{}'", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--credentials '{}': not a regular file", path.display())]
    NotAFile { path: PathBuf },
    /// Others than its owner may read the file.
    #[error(
        "--credentials '{}': mode {mode:04o} lets others read the password; chmod 600 it",
        path.display()
    )]
    Readable { path: PathBuf, mode: u32 },
    /// A line that is not `key = value`.
    #[error(
        "--credentials '{}' line {line}: expected 'key = value' (username, password, domain)",
        path.display()
    )]
    Syntax { path: PathBuf, line: usize },
    #[error(
        "--credentials '{}' line {line}: unknown key '{key}' (username, password, domain)",
        path.display()
    )]
    UnknownKey {
        path: PathBuf,
        line: usize,
        key: String,
    },
    #[error("--credentials '{}': no 'password =' line", path.display())]
    NoPassword { path: PathBuf },
    /// Neither a credentials file nor `IOSCOPE_SMB_PASSWORD`.
    #[error(
        "no SMB password: set IOSCOPE_SMB_PASSWORD (and IOSCOPE_SMB_USER) or pass --credentials FILE"
    )]
    NoPasswordSource,
    /// No user in the URI, the environment or the file.
    #[error(
        "no SMB user: put it in the URI (smb://USER@HOST/…), IOSCOPE_SMB_USER or the credentials file"
    )]
    NoUser,
}

static OPTIONS: OnceLock<SmbOptions> = OnceLock::new();

/// Records the command line's SMB options (the first call wins) after checking the
/// credentials file, so a bad file is an input error before anything runs.
pub fn configure(opts: SmbOptions) -> Result<(), CredentialsError> {
    if let Some(p) = &opts.credentials_file {
        read_file(p)?;
    }
    let _ = OPTIONS.set(opts);
    Ok(())
}

/// The options in effect (defaults when [`configure`] was never called).
pub fn options() -> SmbOptions {
    OPTIONS.get().cloned().unwrap_or_default()
}

/// The credentials for a target: the file when `--credentials` was given, else the
/// environment. The URI's user, when present, names the account.
pub fn resolve(uri_user: Option<&str>) -> Result<Credentials, CredentialsError> {
    let (file_user, password) = match options().credentials_file {
        Some(p) => read_file(&p)?,
        None => (
            std::env::var("IOSCOPE_SMB_USER")
                .ok()
                .filter(|u| !u.is_empty()),
            std::env::var("IOSCOPE_SMB_PASSWORD")
                .map_err(|_| CredentialsError::NoPasswordSource)?,
        ),
    };
    let user = uri_user
        .map(str::to_string)
        .or(file_user)
        .ok_or(CredentialsError::NoUser)?;
    Ok(Credentials {
        user,
        password: Password(password),
    })
}

/// Reads a credentials file: (user, password). Refuses one that others may read.
/// iSCSI CHAP reads the same file (`--credentials` serves both).
pub(crate) fn read_file(path: &Path) -> Result<(Option<String>, String), CredentialsError> {
    use std::os::unix::fs::MetadataExt;
    let at = || path.to_path_buf();
    let unreadable = |source| CredentialsError::Read { path: at(), source };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(CredentialsError::NotAFile { path: at() });
    }
    if meta.mode() & 0o077 != 0 {
        return Err(CredentialsError::Readable {
            path: at(),
            mode: meta.mode() & 0o7777,
        });
    }
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    let (mut user, mut password, mut domain) = (None, None, None);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(CredentialsError::Syntax {
                path: at(),
                line: i + 1,
            });
        };
        let v = v.trim().to_string();
        match k.trim() {
            "username" | "user" => user = Some(v),
            "password" => password = Some(v),
            "domain" => domain = Some(v),
            other => {
                return Err(CredentialsError::UnknownKey {
                    path: at(),
                    line: i + 1,
                    key: other.to_string(),
                })
            }
        }
    }
    let password = password.ok_or_else(|| CredentialsError::NoPassword { path: at() })?;
    let user = match (domain, user) {
        (Some(d), Some(u)) if !d.is_empty() && !u.contains('\\') => Some(format!("{d}\\{u}")),
        (_, u) => u,
    };
    Ok((user, password))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file_with(text: &str, mode: u32) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cred");
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        (d, p)
    }

    #[test]
    fn reads_an_smbclient_style_file() {
        let (_d, p) = file_with("username = bob\npassword = s3 cret\ndomain = LAB\n", 0o600);
        let (u, pw) = read_file(&p).unwrap();
        assert_eq!(u.as_deref(), Some("LAB\\bob"));
        assert_eq!(pw, "s3 cret");
    }

    #[test]
    fn refuses_a_file_others_can_read_and_bad_lines() {
        let err = |p: &Path| read_file(p).unwrap_err().to_string();
        let (_d, p) = file_with("username = bob\npassword = x\n", 0o644);
        assert!(
            err(&p).contains("mode 0644 lets others read"),
            "{}",
            err(&p)
        );
        assert!(err(&p).contains("chmod 600"));
        let (_d, p) = file_with("username bob\n", 0o600);
        assert!(err(&p).ends_with("line 1: expected 'key = value' (username, password, domain)"));
        let (_d, p) = file_with("# c\nusername = bob\nsecret = x\n", 0o600);
        assert!(
            err(&p).contains("line 3: unknown key 'secret'"),
            "{}",
            err(&p)
        );
        let (_d, p) = file_with("username = bob\n", 0o600);
        assert!(err(&p).contains("no 'password ='"));
        // The cause of an unreadable file is its source, printed once by the chain.
        let gone = p.with_file_name("gone");
        let e = read_file(&gone).unwrap_err();
        assert_eq!(e.to_string(), format!("--credentials '{}'", gone.display()));
        let chained = crate::errors::chain(&e);
        assert!(chained.contains("No such file"), "{chained}");
    }

    #[test]
    fn password_debug_is_redacted() {
        let c = Credentials {
            user: "u".into(),
            password: Password("hunter2".into()),
        };
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}
