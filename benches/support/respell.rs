//! Other spellings of a JSON text with the same values: what clients that do not write
//! the `to_bytes` form send (compact separators, another key order, pretty-printing).
//! Tokens are copied as they stand (strings with their escapes, numbers digit for
//! digit), so every spelling holds exactly the values of the original.

use membrane_frame::json::{Event, Limits, Reader};

/// How to spell a text again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spelling {
    /// The text unchanged.
    AsStored,
    /// `,` and `:` with no whitespace.
    Compact,
    /// Every object's keys in reverse order, with the stored `", "` / `": "` separators.
    KeysReversed,
    /// `json.dumps(indent=2)` layout: one member per line, two spaces a level.
    Pretty,
}

impl Spelling {
    pub(crate) const ALL: [Spelling; 4] =
        [Spelling::AsStored, Spelling::Compact, Spelling::KeysReversed, Spelling::Pretty];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Spelling::AsStored => "as stored",
            Spelling::Compact => "compact",
            Spelling::KeysReversed => "keys reversed",
            Spelling::Pretty => "pretty-printed",
        }
    }
}

/// A value with its tokens as they stand in the text.
enum Node {
    Token(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

/// `text` in `spelling`; `None` when it is not strict JSON.
pub(crate) fn respell(text: &[u8], spelling: Spelling) -> Option<Vec<u8>> {
    if spelling == Spelling::AsStored {
        return Some(text.to_vec());
    }
    let mut reader: Reader<'_, 1024> = Reader::new(text, Limits::default());
    let first = reader.next_event().ok()??;
    let node = read(&mut reader, first)?;
    reader.finish().ok()?;
    let mut out = String::new();
    write(&node, spelling, 0, &mut out);
    Some(out.into_bytes())
}

fn read(reader: &mut Reader<'_, 1024>, event: Event<'_>) -> Option<Node> {
    Some(match event {
        Event::ObjectStart => {
            let mut members = Vec::new();
            loop {
                match reader.next_event().ok()?? {
                    Event::ObjectEnd => break Node::Object(members),
                    Event::Key(key) => {
                        let value = reader.next_event().ok()??;
                        members.push((format!("\"{}\"", key.raw()), read(reader, value)?));
                    }
                    _ => return None,
                }
            }
        }
        Event::ArrayStart => {
            let mut elements = Vec::new();
            loop {
                match reader.next_event().ok()?? {
                    Event::ArrayEnd => break Node::Array(elements),
                    element => elements.push(read(reader, element)?),
                }
            }
        }
        Event::Str(s) => Node::Token(format!("\"{}\"", s.raw())),
        Event::Number(n) => Node::Token(n.raw().to_owned()),
        Event::Bool(b) => Node::Token(b.to_string()),
        Event::Null => Node::Token("null".to_owned()),
        Event::ObjectEnd | Event::ArrayEnd | Event::Key(_) => return None,
    })
}

fn write(node: &Node, spelling: Spelling, level: usize, out: &mut String) {
    let (comma, colon) = match spelling {
        Spelling::Compact => (",", ":"),
        Spelling::Pretty => (",", ": "),
        _ => (", ", ": "),
    };
    let newline = |out: &mut String, level: usize| {
        if spelling == Spelling::Pretty {
            out.push('\n');
            out.push_str(&"  ".repeat(level));
        }
    };
    match node {
        Node::Token(token) => out.push_str(token),
        Node::Array(elements) => {
            out.push('[');
            for (i, element) in elements.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                newline(out, level + 1);
                write(element, spelling, level + 1, out);
            }
            if !elements.is_empty() {
                newline(out, level);
            }
            out.push(']');
        }
        Node::Object(members) => {
            out.push('{');
            let ordered: Vec<&(String, Node)> = if spelling == Spelling::KeysReversed {
                members.iter().rev().collect()
            } else {
                members.iter().collect()
            };
            for (i, (key, value)) in ordered.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                newline(out, level + 1);
                out.push_str(key);
                out.push_str(colon);
                write(value, spelling, level + 1, out);
            }
            if !members.is_empty() {
                newline(out, level);
            }
            out.push('}');
        }
    }
}
