//! What the tool reports about an input it judged: the library's verdict, or one of the
//! few problems the tool finds before the library sees the bytes. Errors of the library
//! are made only by the library; this type carries the tool's own cases beside them, in
//! the same words (code, class, offset, field, reason).

use crate::lines;
use membrane_frame::{Error, ErrorClass, ErrorCode};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Problem {
    /// The library's verdict.
    Library(Error),
    /// A line of a JSON-lines file longer than the tool reads (16 MiB): reported as
    /// `envelope_json` at that offset, since no envelope is that long.
    LineTooLong,
}

impl Problem {
    pub fn code(&self) -> ErrorCode {
        match self {
            Problem::Library(err) => err.code(),
            Problem::LineTooLong => ErrorCode::EnvelopeJson,
        }
    }

    pub fn class(&self) -> ErrorClass {
        self.code().class()
    }

    pub fn offset(&self) -> Option<u64> {
        match self {
            Problem::Library(err) => err.offset(),
            Problem::LineTooLong => Some(lines::MAX_LINE),
        }
    }

    pub fn field(&self) -> Option<&'static str> {
        match self {
            Problem::Library(err) => err.field(),
            Problem::LineTooLong => None,
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            Problem::Library(err) => err.reason(),
            Problem::LineTooLong => "line longer than 16 MiB",
        }
    }
}

impl From<Error> for Problem {
    fn from(err: Error) -> Problem {
        Problem::Library(err)
    }
}

impl From<&Error> for Problem {
    fn from(err: &Error) -> Problem {
        Problem::Library(*err)
    }
}

impl From<&Problem> for Problem {
    fn from(problem: &Problem) -> Problem {
        *problem
    }
}

/// `envelope_json at byte 16777216: line longer than 16 MiB`, as the library words its own.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Library(err) => err.fmt(f),
            Problem::LineTooLong => {
                write!(f, "{} at byte {}: {}", self.code(), lines::MAX_LINE, self.reason())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_reads_like_a_library_error() {
        let problem = Problem::LineTooLong;
        assert_eq!(problem.code(), ErrorCode::EnvelopeJson);
        assert_eq!(problem.to_string(), format!("envelope_json at byte {}: line longer than 16 MiB", lines::MAX_LINE));
        let library = Problem::from(membrane_frame::Frame::parse(b"").unwrap_err());
        assert_eq!((library.code(), library.offset()), (ErrorCode::TooShort, Some(0)));
    }
}
