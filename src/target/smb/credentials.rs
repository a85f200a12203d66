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

/// The SMB choices made on the command line.
#[derive(Debug, Clone, Default)]
pub struct SmbOptions {
    pub credentials_file: Option<PathBuf>,
    /// `--smb-encrypt`: refuse a session the server does not encrypt.
    pub require_encryption: bool,
}

static OPTIONS: OnceLock<SmbOptions> = OnceLock::new();

/// Records the command line's SMB options (the first call wins) after checking the
/// credentials file, so a bad file is an input error before anything runs.
pub fn configure(opts: SmbOptions) -> Result<(), String> {
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
pub fn resolve(uri_user: Option<&str>) -> Result<Credentials, String> {
    let (file_user, password) = match options().credentials_file {
        Some(p) => read_file(&p)?,
        None => (
            std::env::var("IOSCOPE_SMB_USER").ok().filter(|u| !u.is_empty()),
            std::env::var("IOSCOPE_SMB_PASSWORD").map_err(|_| {
                "no SMB password: set IOSCOPE_SMB_PASSWORD (and IOSCOPE_SMB_USER) or pass --credentials FILE"
                    .to_string()
            })?,
        ),
    };
    let user = uri_user.map(str::to_string).or(file_user).ok_or(
        "no SMB user: put it in the URI (smb://USER@HOST/…), IOSCOPE_SMB_USER or the credentials file",
    )?;
    Ok(Credentials {
        user,
        password: Password(password),
    })
}

/// Reads a credentials file: (user, password). Refuses one that others may read.
/// iSCSI CHAP reads the same file (`--credentials` serves both).
pub(crate) fn read_file(path: &Path) -> Result<(Option<String>, String), String> {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("--credentials '{shown}': {e}"))?;
    if !meta.is_file() {
        return Err(format!("--credentials '{shown}': not a regular file"));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "--credentials '{shown}': mode {:04o} lets others read the password; chmod 600 it",
            meta.mode() & 0o7777
        ));
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--credentials '{shown}': {e}"))?;
    let (mut user, mut password, mut domain) = (None, None, None);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(format!(
                "--credentials '{shown}' line {}: expected 'key = value' (username, password, domain)",
                i + 1
            ));
        };
        let v = v.trim().to_string();
        match k.trim() {
            "username" | "user" => user = Some(v),
            "password" => password = Some(v),
            "domain" => domain = Some(v),
            other => {
                return Err(format!(
                    "--credentials '{shown}' line {}: unknown key '{other}' (username, password, domain)",
                    i + 1
                ))
            }
        }
    }
    let password =
        password.ok_or_else(|| format!("--credentials '{shown}': no 'password =' line"))?;
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
        let (_d, p) = file_with("username = bob\npassword = x\n", 0o644);
        assert!(read_file(&p).unwrap_err().contains("chmod 600"));
        let (_d, p) = file_with("username bob\n", 0o600);
        assert!(read_file(&p).unwrap_err().contains("line 1"));
        let (_d, p) = file_with("username = bob\n", 0o600);
        assert!(read_file(&p).unwrap_err().contains("no 'password ='"));
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
