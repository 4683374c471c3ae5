//! Output helpers: JSON objects with keys in a chosen order, human-readable sizes and
//! rates, and error messages on stderr.

use crate::problem::Problem;
use serde_json::Value;
use std::io::Write as _;
use std::path::Path;

/// A JSON object written key by key, so `path` and `code` come first on every line.
#[derive(Debug, Default)]
pub struct JsonObject {
    text: String,
}

impl JsonObject {
    pub fn new() -> JsonObject {
        JsonObject { text: String::from("{") }
    }

    /// Add a key and value.
    pub fn field(mut self, key: &str, value: impl Into<Value>) -> JsonObject {
        if self.text.len() > 1 {
            self.text.push_str(", ");
        }
        self.text.push_str(&Value::from(key).to_string());
        self.text.push_str(": ");
        self.text.push_str(&value.into().to_string());
        self
    }

    /// Add a key whose value is another object.
    pub fn object(mut self, key: &str, value: JsonObject) -> JsonObject {
        if self.text.len() > 1 {
            self.text.push_str(", ");
        }
        self.text.push_str(&Value::from(key).to_string());
        self.text.push_str(": ");
        self.text.push_str(&value.finish());
        self
    }

    /// Add a key when there is a value.
    pub fn maybe(self, key: &str, value: Option<impl Into<Value>>) -> JsonObject {
        match value {
            Some(value) => self.field(key, value),
            None => self,
        }
    }

    /// `path`, as text; a path that is not UTF-8 also as `path_bytes`, its exact bytes
    /// in standard base64, so a script can act on the very file.
    pub fn path(self, path: &Path) -> JsonObject {
        let object = self.field("path", path_text(path));
        match path.to_str() {
            Some(_) => object,
            None => {
                use base64::Engine as _;
                use std::os::unix::ffi::OsStrExt as _;
                let bytes = base64::engine::general_purpose::STANDARD.encode(path.as_os_str().as_bytes());
                object.field("path_bytes", bytes)
            }
        }
    }

    /// The error's code, class, offset, field and reason.
    pub fn error(self, err: impl Into<Problem>) -> JsonObject {
        let err = err.into();
        self.field("code", err.code().name())
            .field("class", err.class().name())
            .maybe("offset", err.offset())
            .maybe("field", err.field())
            .field("reason", err.reason())
    }

    pub fn finish(mut self) -> String {
        self.text.push('}');
        self.text
    }
}

/// A path as text for output (lossy for paths that are not UTF-8).
pub fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `1.50 GiB`, `12.0 MiB`, `512 B`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {}", UNITS.get(unit).copied().unwrap_or("?"))
}

/// Bytes per second as `1.93 GiB/s`.
pub fn rate(bytes_done: u64, seconds: f64) -> String {
    if seconds <= 0.0 {
        return String::from("-");
    }
    let per_second = (bytes_done as f64 / seconds).min(u64::MAX as f64) as u64;
    format!("{}/s", bytes(per_second))
}

/// A frame error in the words stderr and the human report use:
/// `trailer_mismatch at byte 1234 (trailer): trailer does not match ...`.
pub fn frame_error(err: impl Into<Problem>) -> String {
    err.into().to_string()
}

/// `1 file`, `2 files`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `membrane-frame: PATH: message` on stderr.
pub fn complain(path: &Path, message: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "membrane-frame: {}: {message}", path.display());
}

/// A line on standard output; a closed pipe is not an error worth a panic.
pub fn say(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// `membrane-frame: message` on stderr.
pub fn complain_plain(message: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "membrane-frame: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_their_key_order_and_escape() {
        let line = JsonObject::new().field("path", "a\"b").field("code", "ok").maybe("offset", None::<u64>).finish();
        assert_eq!(line, r#"{"path": "a\"b", "code": "ok"}"#);
        let parsed: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["path"], "a\"b");
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(bytes(16 << 20), "16.0 MiB");
        assert_eq!(bytes(2 << 30), "2.00 GiB");
    }
}
