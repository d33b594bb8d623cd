//! Secrets (the password) kept out of every log line, error message and recording.

use std::fmt;
use std::path::Path;

/// A password. Its `Debug` and `Display` never show the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value, for the one place that must send it (the `AUTH` command).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The environment variable the password is read from.
pub const PASSWORD_ENV: &str = "SLOTSCOPE_PASSWORD";

/// Why the password could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The password file could not be read (the message names the file, never its content).
    #[error("cannot read password file {path}: {source}")]
    File {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The password file is empty.
    #[error("password file {0} is empty")]
    Empty(String),
}

/// The password from `--password-file` (first line, trailing newline removed), else from
/// [`PASSWORD_ENV`], else none.
pub fn load_password(file: Option<&Path>) -> Result<Option<Secret>, SecretError> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|source| SecretError::File {
            path: path.display().to_string(),
            source,
        })?;
        let first = text.lines().next().unwrap_or("").to_owned();
        if first.is_empty() {
            return Err(SecretError::Empty(path.display().to_string()));
        }
        return Ok(Some(Secret::new(first)));
    }
    Ok(std::env::var(PASSWORD_ENV)
        .ok()
        .filter(|p| !p.is_empty())
        .map(Secret::new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_hide_the_value() {
        let s = Secret::new("s3cr3t-value".into());
        assert!(!format!("{s:?} {s}").contains("s3cr3t"));
        assert_eq!(s.expose(), "s3cr3t-value");
    }

    #[test]
    fn reads_the_first_line_of_a_password_file() {
        let dir = std::env::temp_dir().join(format!("slotscope-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("pw");
        std::fs::write(&f, "pa ss\nignored\n").unwrap();
        assert_eq!(load_password(Some(&f)).unwrap().unwrap().expose(), "pa ss");
        std::fs::write(&f, "\n").unwrap();
        assert!(matches!(
            load_password(Some(&f)),
            Err(SecretError::Empty(_))
        ));
        let missing = dir.join("missing");
        let e = load_password(Some(&missing)).unwrap_err().to_string();
        assert!(e.contains("cannot read password file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
