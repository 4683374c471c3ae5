//! Reading a snapshot (SPEC §5): one pass over the strict reader remembers each
//! field's value or first problem; the whole text is validated (and the shard maps
//! checked for repeated keys) before any field is judged.

use super::{
    check_epoch, field_error, Member, Membership, PrimaryMap, ReplicaMap, Repr, Snapshot, LEGACY_SCHEMA_VERSION,
    SCHEMA_VERSION, SNAPSHOT_KEY_CAPACITY,
};
use crate::error::{Error, ErrorCode};
use crate::json::keys::{cmp_decoded, find_duplicate_key};
use crate::json::map_index::{IndexWriter, MapIndex};
use crate::json::{Event, JsonError, JsonErrorKind, JsonStr, Limits, Reader};
use crate::table::is_valid_json_id;
use core::cmp::Ordering;
use core::ops::Range;

type SnapshotReader<'a> = Reader<'a, SNAPSHOT_KEY_CAPACITY>;

/// The required top-level fields, in judging (table) order.
const FIELDS: [&str; 5] = ["cluster_epoch", "captured_at", "membership", "shards", "server"];
const EPOCH: usize = 0;
const CAPTURED_AT: usize = 1;
const MEMBERSHIP: usize = 2;
const SHARDS: usize = 3;
const SERVER: usize = 4;

/// A shard map found in the text.
#[derive(Clone, Debug)]
struct MapFound {
    at: usize,
    len: usize,
    sorted: bool,
    /// Its entries' words in the index, when one is being recorded and the map was read
    /// in one pass.
    words: Option<Range<usize>>,
}

/// Everything one pass over the text found, before judging.
#[derive(Default)]
struct Scan {
    version: Option<Result<(i64, usize), Error>>,
    cluster_epoch: Option<u64>,
    captured_at: Option<f64>,
    membership: Option<(usize, usize)>,
    shards: Option<(MapFound, MapFound)>,
    server: Option<(u64, u64)>,
    seen: [bool; FIELDS.len()],
    problems: [Option<Error>; FIELDS.len()],
    /// Shard maps whose keys were not strictly increasing: search them for repeats.
    unsorted_maps: heapless::Vec<usize, 2>,
    object_end: usize,
}

/// Keep the first problem.
fn note(slot: &mut Option<Error>, problem: Error) {
    if slot.is_none() {
        *slot = Some(problem);
    }
}

fn version_error(at: usize, reason: &'static str) -> Error {
    Error::new(ErrorCode::SnapshotVersion, reason).at(at as u64).in_field("schema_version")
}

fn missing(field: &'static str, end: usize) -> Error {
    field_error(field, "required field is missing").at(end as u64)
}

impl<'a> Snapshot<'a> {
    /// Parse and validate a snapshot text (schema 5 or 2) with the default JSON limits.
    /// Errors as in the [module docs](crate::snapshot), with offsets into `text`.
    ///
    /// ```
    /// use membrane_frame::{snapshot::Snapshot, ErrorCode};
    /// let err = Snapshot::parse(br#"{"schema_version": 3}"#).unwrap_err();
    /// assert_eq!(err.code(), ErrorCode::SnapshotVersion);
    /// let err = Snapshot::parse(br#"{"schema_version": 5, "cluster_epoch": -1}"#).unwrap_err();
    /// assert_eq!((err.code(), err.field(), err.offset()), (ErrorCode::SnapshotField, Some("cluster_epoch"), Some(39)));
    /// ```
    pub fn parse(text: &'a [u8]) -> Result<Snapshot<'a>, Error> {
        Snapshot::parse_with(text, Limits::default())
    }

    /// [`parse`](Self::parse) with explicit JSON limits.
    pub fn parse_with(text: &'a [u8], limits: Limits) -> Result<Snapshot<'a>, Error> {
        read(text, limits, true, None).map(|(snapshot, _)| snapshot)
    }

    /// [`parse`](Self::parse), recording in `index` where every entry of the shard
    /// maps lies, so that iterating the maps reads those positions instead of walking
    /// the text again (what `mbr_snapshot_cursor_read_primary` and `_read_replica` do
    /// for C callers). The words a snapshot needs: four for each primary entry, three
    /// for each replica entry and two for each of its node ids. When `index` is
    /// shorter, `buffer_too_small` with the number needed, after every problem of the
    /// text itself. A text of 2 GiB or more is parsed as by `parse`, and its maps are
    /// walked in the text.
    ///
    /// ```
    /// use membrane_frame::{snapshot::Snapshot, ErrorCode};
    /// let text = br#"{"captured_at": 0.5, "cluster_epoch": 3, "membership": [], "schema_version": 5, "server": {"error_count": 0, "request_count": 0}, "shards": {"primary_map": {"h1": "node-1", "h2": "node-2"}, "replica_map": {"h1": ["node-2", "node-3"]}}}"#;
    /// let err = Snapshot::parse_indexed(text, &mut []).unwrap_err();
    /// assert_eq!((err.code(), err.needed()), (ErrorCode::BufferTooSmall, Some(2 * 4 + 3 + 2 * 2)));
    /// let mut index = [0u32; 15];
    /// let snapshot = Snapshot::parse_indexed(text, &mut index)?;
    /// let (hash, node) = snapshot.primary_map().iter().nth(1).unwrap();
    /// assert_eq!((hash.as_str(), node.as_str()), (Some("h2"), Some("node-2")));
    /// # Ok::<(), membrane_frame::Error>(())
    /// ```
    pub fn parse_indexed(text: &'a [u8], index: &'a mut [u32]) -> Result<Snapshot<'a>, Error> {
        read(text, Limits::default(), true, Some(index)).map(|(snapshot, _)| snapshot)
    }

    /// Parse a snapshot to restore it under live epoch `live_epoch`: the reader's
    /// errors first (the caller leaves such a file alone), then the epoch guard
    /// ([`check_epoch`]) — `stale_epoch` when the snapshot is two or more epochs
    /// behind or has no `cluster_epoch` at all (the caller deletes such a file). A
    /// missing epoch is the only missing field this tolerates, and only to report it
    /// as stale.
    ///
    /// ```
    /// use membrane_frame::{snapshot::Snapshot, ErrorCode};
    /// let text = br#"{"captured_at": 0.0, "membership": [], "schema_version": 5, "server": {"error_count": 0, "request_count": 0}, "shards": {"primary_map": {}, "replica_map": {}}}"#;
    /// assert_eq!(Snapshot::parse(text).unwrap_err().code(), ErrorCode::SnapshotField);
    /// assert_eq!(Snapshot::parse_guarded(text, 1).unwrap_err().code(), ErrorCode::StaleEpoch);
    /// ```
    pub fn parse_guarded(text: &'a [u8], live_epoch: u64) -> Result<Snapshot<'a>, Error> {
        let (snapshot, epoch) = read(text, Limits::default(), false, None)?;
        check_epoch(live_epoch, epoch)?;
        Ok(snapshot)
    }
}

/// Read and judge a snapshot text; with `epoch_required` false a missing
/// `cluster_epoch` is `None` (reported by the guard) rather than an error. With
/// `index`, the shard maps' entries are recorded there (`Snapshot::parse_indexed`).
pub(crate) fn read<'a>(
    text: &'a [u8],
    limits: Limits,
    epoch_required: bool,
    index: Option<&'a mut [u32]>,
) -> Result<(Snapshot<'a>, Option<u64>), Error> {
    let mut writer = index.and_then(|words| IndexWriter::new(text, words));
    // The reader accepted the text, so it is UTF-8: `source` is the reader's own view.
    let (scan, source) = scan(text, limits, writer.as_mut())?;
    for &at in &scan.unsorted_maps {
        if let Some(offset) = find_duplicate_key(source, at) {
            return Err(JsonError { kind: JsonErrorKind::DuplicateKey, offset }.to_error(ErrorCode::SnapshotJson, 0));
        }
    }
    let end = scan.object_end;
    let schema_version = match scan.version {
        None => return Err(version_error(end, "schema_version is missing")),
        Some(Err(problem)) => return Err(problem),
        Some(Ok((version, _))) if version == SCHEMA_VERSION || version == LEGACY_SCHEMA_VERSION => version,
        Some(Ok((_, at))) => return Err(version_error(at, "schema_version is not 5 or 2")),
    };
    for (index, (&seen, &name)) in scan.seen.iter().zip(FIELDS.iter()).enumerate() {
        if !seen && (epoch_required || index != EPOCH) {
            return Err(missing(name, end));
        }
        if let Some(problem) = scan.problems.get(index).copied().flatten() {
            return Err(problem);
        }
    }
    let (membership_at, membership_len) = scan.membership.ok_or(missing("membership", end))?;
    let (primary, replica) = scan.shards.ok_or(missing("shards", end))?;
    let (request_count, error_count) = scan.server.ok_or(missing("server", end))?;
    // Last of all: the text is a valid snapshot, and only the words may be too few.
    let index = match writer.map(IndexWriter::into_words) {
        Some(Err(needed)) => return Err(Error::buffer_too_small(needed as u64)),
        Some(Ok(words)) => words,
        None => &[],
    };
    let map_index = |words: Option<Range<usize>>| words.and_then(|words| MapIndex::new(source, index, words));
    let snapshot = Snapshot {
        source: Some(text),
        schema_version,
        captured_at: scan.captured_at.ok_or(missing("captured_at", end))?,
        cluster_epoch: scan.cluster_epoch.unwrap_or(0),
        membership: Membership {
            repr: Repr::Text { text: source, at: membership_at, sorted: true },
            len: membership_len,
        },
        primary_map: PrimaryMap {
            repr: Repr::Text { text: source, at: primary.at, sorted: primary.sorted },
            len: primary.len,
            index: map_index(primary.words),
        },
        replica_map: ReplicaMap {
            repr: Repr::Text { text: source, at: replica.at, sorted: replica.sorted },
            len: replica.len,
            index: map_index(replica.words),
        },
        request_count,
        error_count,
    };
    Ok((snapshot, scan.cluster_epoch))
}

fn scan<'a>(
    text: &'a [u8],
    limits: Limits,
    mut index: Option<&mut IndexWriter<'_, 'a>>,
) -> Result<(Scan, &'a str), Error> {
    let json = |err: JsonError| err.to_error(ErrorCode::SnapshotJson, 0);
    let mut reader: SnapshotReader<'_> = Reader::new(text, limits);
    if reader.next_event().map_err(json)? != Some(Event::ObjectStart) {
        let at = reader.event_offset() as u64;
        reader.finish().map_err(json)?;
        return Err(Error::new(ErrorCode::SnapshotJson, "snapshot is not a JSON object").at(at));
    }
    let mut scan = Scan::default();
    while let Some(Event::Key(key)) = reader.next_event().map_err(json)? {
        // After a key the grammar always yields a value (or an error).
        let value = reader.next_event().map_err(json)?.unwrap_or(Event::Null);
        let at = reader.event_offset();
        if key.eq_str("schema_version") {
            reader.skip_value(&value).map_err(json)?;
            scan.version = Some(match value {
                Event::Number(n) if n.is_integer() => {
                    n.as_i64().map(|v| (v, at)).ok_or(version_error(at, "schema_version is not 5 or 2"))
                }
                _ => Err(version_error(at, "schema_version must be an integer")),
            });
            continue;
        }
        let Some(field) = FIELDS.iter().position(|name| key.eq_str(name)) else {
            reader.skip_value(&value).map_err(json)?;
            continue;
        };
        if let Some(seen) = scan.seen.get_mut(field) {
            *seen = true;
        }
        let recording = index.as_deref_mut();
        if let Err(problem) = read_field(&mut reader, field, value, at, &mut scan, recording).map_err(json)? {
            if let Some(slot) = scan.problems.get_mut(field) {
                *slot = Some(problem);
            }
        }
    }
    // The loop ends at the snapshot's `}`; anything after it must be whitespace.
    scan.object_end = reader.event_offset();
    reader.finish().map_err(json)?;
    Ok((scan, reader.valid_text()))
}

/// Read the value of top-level field `index`, whose first event (at `at`) is `value`.
/// The outer `Result` is a JSON error (fatal); the inner one the field's first problem.
fn read_field<'a>(
    reader: &mut SnapshotReader<'a>,
    index: usize,
    value: Event<'a>,
    at: usize,
    scan: &mut Scan,
    recording: Option<&mut IndexWriter<'_, 'a>>,
) -> Result<Result<(), Error>, JsonError> {
    let problem = |field: &'static str, reason: &'static str| Ok(Err(field_error(field, reason).at(at as u64)));
    match index {
        EPOCH => {
            reader.skip_value(&value)?;
            match value {
                Event::Number(n) if n.as_u64().is_some() => scan.cluster_epoch = n.as_u64(),
                _ => return problem("cluster_epoch", "cluster_epoch must be an integer >= 0"),
            }
        }
        CAPTURED_AT => {
            reader.skip_value(&value)?;
            match value {
                Event::Number(n) if n.as_f64().is_finite() && n.as_f64() >= 0.0 => scan.captured_at = Some(n.as_f64()),
                _ => return problem("captured_at", "captured_at must be a finite number >= 0"),
            }
        }
        MEMBERSHIP => {
            if value != Event::ArrayStart {
                reader.skip_value(&value)?;
                return problem("membership", "membership must be an array of objects");
            }
            let (mut len, mut first) = (0usize, None);
            loop {
                match reader.next_event()? {
                    None | Some(Event::ArrayEnd) => break,
                    Some(Event::ObjectStart) => {
                        if let Err(member_problem) = read_member(reader, 0)? {
                            note(&mut first, member_problem);
                        }
                    }
                    Some(other) => {
                        let element_at = reader.event_offset() as u64;
                        reader.skip_value(&other)?;
                        note(
                            &mut first,
                            field_error("membership", "membership entries must be objects").at(element_at),
                        );
                    }
                }
                len += 1;
            }
            if let Some(member_problem) = first {
                return Ok(Err(member_problem));
            }
            scan.membership = Some((at, len));
        }
        SHARDS => return read_shards(reader, value, at, scan, recording),
        SERVER => return read_server(reader, value, at, scan),
        _ => reader.skip_value(&value)?,
    }
    Ok(Ok(()))
}

/// Read one member object whose `{` the reader has just yielded, up to its `}`.
/// Offsets are the reader's plus `base`.
pub(super) fn read_member<'a, const KEYS: usize>(
    reader: &mut Reader<'a, KEYS>,
    base: usize,
) -> Result<Result<Member<'a>, Error>, JsonError> {
    let mut member = Member::new("", "", 0);
    let (mut node_id, mut host, mut port, mut problem) = (false, false, false, None);
    while let Some(Event::Key(key)) = reader.next_event()? {
        let value = reader.next_event()?.unwrap_or(Event::Null);
        let at = base.saturating_add(reader.event_offset()) as u64;
        reader.skip_value(&value)?;
        if problem.is_some() {
            continue;
        }
        let unsigned = match value {
            Event::Number(n) => n.as_u64(),
            _ => None,
        };
        let boolean = match value {
            Event::Bool(b) => Some(b),
            _ => None,
        };
        let bad = |field: &'static str, reason: &'static str| Some(field_error(field, reason).at(at));
        if key.eq_str("node_id") {
            match value {
                Event::Str(s) if is_valid_json_id(&s) => (member.node_id, node_id) = (s, true),
                _ => problem = bad("membership.node_id", "node_id must be a string of 1-128 characters"),
            }
        } else if key.eq_str("host") {
            match value {
                Event::Str(s) => (member.host, host) = (s, true),
                _ => problem = bad("membership.host", "host must be a string"),
            }
        } else if key.eq_str("port") {
            match unsigned.and_then(|p| u16::try_from(p).ok()) {
                Some(p) => (member.port, port) = (p, true),
                None => problem = bad("membership.port", "port must be an integer in 0..=65535"),
            }
        } else if key.eq_str("cluster_epoch") {
            match unsigned {
                Some(epoch) => member.cluster_epoch = Some(epoch),
                None => problem = bad("membership.cluster_epoch", "cluster_epoch must be an integer >= 0"),
            }
        } else if key.eq_str("missed_heartbeats") {
            match unsigned {
                Some(missed) => member.missed_heartbeats = Some(missed),
                None => problem = bad("membership.missed_heartbeats", "missed_heartbeats must be an integer >= 0"),
            }
        } else if key.eq_str("healthy") {
            match boolean {
                Some(b) => member.healthy = Some(b),
                None => problem = bad("membership.healthy", "healthy must be a boolean"),
            }
        } else if key.eq_str("suspect") {
            match boolean {
                Some(b) => member.suspect = Some(b),
                None => problem = bad("membership.suspect", "suspect must be a boolean"),
            }
        }
    }
    let end = base.saturating_add(reader.event_offset());
    if let Some(problem) = problem {
        return Ok(Err(problem));
    }
    for (present, field) in [(node_id, "membership.node_id"), (host, "membership.host"), (port, "membership.port")] {
        if !present {
            return Ok(Err(missing(field, end)));
        }
    }
    Ok(Ok(member))
}

fn read_shards<'a>(
    reader: &mut SnapshotReader<'a>,
    value: Event<'a>,
    at: usize,
    scan: &mut Scan,
    mut recording: Option<&mut IndexWriter<'_, 'a>>,
) -> Result<Result<(), Error>, JsonError> {
    if value != Event::ObjectStart {
        reader.skip_value(&value)?;
        return Ok(Err(field_error("shards", "shards must be an object").at(at as u64)));
    }
    let (mut primary, mut replica, mut first) = (None, None, None);
    while let Some(Event::Key(key)) = reader.next_event()? {
        let value = reader.next_event()?.unwrap_or(Event::Null);
        let map_at = reader.event_offset();
        let is_primary = if key.eq_str("primary_map") {
            true
        } else if key.eq_str("replica_map") {
            false
        } else {
            reader.skip_value(&value)?;
            continue;
        };
        let name = if is_primary { "shards.primary_map" } else { "shards.replica_map" };
        if value != Event::ObjectStart {
            reader.skip_value(&value)?;
            note(&mut first, field_error(name, "must be an object").at(map_at as u64));
            continue;
        }
        let (found, problem) = read_map(reader, map_at, is_primary, name, recording.as_deref_mut())?;
        if !found.sorted {
            let _ = scan.unsorted_maps.push(found.at);
        }
        if let Some(problem) = problem {
            note(&mut first, problem);
        }
        if is_primary {
            primary = Some(found);
        } else {
            replica = Some(found);
        }
    }
    let end = reader.event_offset();
    if let Some(problem) = first {
        return Ok(Err(problem));
    }
    match (primary, replica) {
        (Some(primary), Some(replica)) => scan.shards = Some((primary, replica)),
        (None, _) => return Ok(Err(missing("shards.primary_map", end))),
        (_, None) => return Ok(Err(missing("shards.replica_map", end))),
    }
    Ok(Ok(()))
}

/// Read a shard map whose `{` (at `at`) the reader has just yielded. Its keys are
/// checked here: strictly increasing means no repeats; otherwise the caller searches.
/// With `recording`, a map read in one pass has its entries recorded there.
fn read_map<'a>(
    reader: &mut SnapshotReader<'a>,
    at: usize,
    is_primary: bool,
    name: &'static str,
    recording: Option<&mut IndexWriter<'_, 'a>>,
) -> Result<(MapFound, Option<Error>), JsonError> {
    reader.defer_duplicate_check();
    // A well-formed map in one pass; anything else event by event (which words it).
    // (One call with `recording.as_deref_mut()` instead of these two cost the
    // microcontroller build 324 bytes more.)
    let (one_pass, words) = match recording {
        Some(writer) => {
            let start = writer.len();
            let one_pass = reader.string_map(!is_primary, Some(&mut *writer));
            (one_pass, Some(start..writer.len()))
        }
        None => (reader.string_map(!is_primary, None), None),
    };
    if let Some((len, sorted)) = one_pass {
        return Ok((MapFound { at, len, sorted, words }, None));
    }
    // Read event by event, the map is not indexed. The one-pass walk gives up only on
    // a map with a problem, which fails the parse, so what it recorded is not taken
    // back from the count of words needed.
    let (mut len, mut sorted, mut problem) = (0usize, true, None);
    let mut previous: Option<JsonStr<'_>> = None;
    while let Some(Event::Key(key)) = reader.next_event()? {
        len += 1;
        if sorted && previous.is_some_and(|p| cmp_decoded(&p, &key) != Ordering::Less) {
            sorted = false;
        }
        previous = Some(key);
        let value = reader.next_event()?.unwrap_or(Event::Null);
        let value_at = reader.event_offset() as u64;
        if is_primary {
            reader.skip_value(&value)?;
            if !matches!(value, Event::Str(_)) {
                note(&mut problem, field_error(name, "primary_map values must be strings").at(value_at));
            }
        } else if value == Event::ArrayStart {
            loop {
                match reader.next_event()? {
                    None | Some(Event::ArrayEnd) => break,
                    Some(Event::Str(_)) => {}
                    Some(other) => {
                        let element_at = reader.event_offset() as u64;
                        reader.skip_value(&other)?;
                        note(
                            &mut problem,
                            field_error(name, "replica_map values must be arrays of strings").at(element_at),
                        );
                    }
                }
            }
        } else {
            reader.skip_value(&value)?;
            note(&mut problem, field_error(name, "replica_map values must be arrays of strings").at(value_at));
        }
    }
    Ok((MapFound { at, len, sorted, words: None }, problem))
}

fn read_server<'a>(
    reader: &mut SnapshotReader<'a>,
    value: Event<'a>,
    at: usize,
    scan: &mut Scan,
) -> Result<Result<(), Error>, JsonError> {
    if value != Event::ObjectStart {
        reader.skip_value(&value)?;
        return Ok(Err(field_error("server", "server must be an object").at(at as u64)));
    }
    let (mut requests, mut errors, mut first) = (None, None, None);
    while let Some(Event::Key(key)) = reader.next_event()? {
        let value = reader.next_event()?.unwrap_or(Event::Null);
        let value_at = reader.event_offset() as u64;
        reader.skip_value(&value)?;
        let (slot, name) = if key.eq_str("request_count") {
            (&mut requests, "server.request_count")
        } else if key.eq_str("error_count") {
            (&mut errors, "server.error_count")
        } else {
            continue;
        };
        match value {
            Event::Number(n) if n.as_u64().is_some() => *slot = n.as_u64(),
            _ => note(&mut first, field_error(name, "must be an integer >= 0").at(value_at)),
        }
    }
    let end = reader.event_offset();
    if let Some(problem) = first {
        return Ok(Err(problem));
    }
    match (requests, errors) {
        (Some(requests), Some(errors)) => scan.server = Some((requests, errors)),
        (None, _) => return Ok(Err(missing("server.request_count", end))),
        (_, None) => return Ok(Err(missing("server.error_count", end))),
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"{"captured_at": 1.5, "cluster_epoch": 7, "membership": [{"host": "h", "node_id": "n", "port": 1}], "schema_version": 5, "server": {"error_count": 0, "request_count": 0}, "shards": {"primary_map": {"a": "n"}, "replica_map": {"a": ["n"]}}}"#;

    fn verdict(text: &str) -> Result<(), (ErrorCode, Option<&'static str>)> {
        Snapshot::parse(text.as_bytes()).map(|_| ()).map_err(|e| (e.code(), e.field()))
    }

    #[test]
    fn base_is_accepted() {
        assert_eq!(verdict(BASE), Ok(()));
    }

    #[test]
    fn json_then_version_then_fields_in_table_order() {
        let text = BASE.replace("\"cluster_epoch\": 7", "\"cluster_epoch\": -7").replace("5,", "4,");
        assert_eq!(verdict(&text), Err((ErrorCode::SnapshotVersion, Some("schema_version"))));
        let text = text.replace("{\"a\": \"n\"}", "{\"a\": \"n\", \"a\": \"m\"}");
        assert_eq!(verdict(&text), Err((ErrorCode::SnapshotJson, None)));
        // server is written after cluster_epoch's problem but judged later.
        let text = BASE
            .replace("\"error_count\": 0", "\"error_count\": -1")
            .replace("\"captured_at\": 1.5", "\"captured_at\": -1.5");
        assert_eq!(verdict(&text), Err((ErrorCode::SnapshotField, Some("captured_at"))));
    }

    #[test]
    fn nested_problems_name_their_path_and_point_at_the_value() {
        let cases = [
            ("\"port\": 1", "\"port\": 65536", "membership.port", "65536"),
            ("\"port\": 1", "\"port\": 1, \"healthy\": 1", "membership.healthy", "1, \"healthy\""),
            ("[\"n\"]", "[\"n\", 5]", "shards.replica_map", "5]"),
            ("{\"a\": \"n\"}", "{\"a\": null}", "shards.primary_map", "null"),
            ("\"request_count\": 0", "\"request_count\": 0.0", "server.request_count", "0.0"),
            ("[{\"host\"", "[7, {\"host\"", "membership", "7,"),
            // A value of the wrong type, wherever it stands.
            ("[{\"host\": \"h\", \"node_id\": \"n\", \"port\": 1}]", "{\"a\": 1}", "membership", "{\"a\""),
            ("\"host\": \"h\"", "\"host\": 5", "membership.host", "5,"),
            ("\"port\": 1", "\"port\": 1, \"cluster_epoch\": -1", "membership.cluster_epoch", "-1}"),
            ("\"port\": 1", "\"port\": 1, \"missed_heartbeats\": \"x\"", "membership.missed_heartbeats", "\"x\"}"),
            ("{\"a\": \"n\"}", "[\"n\"]", "shards.primary_map", "[\"n\"]"),
            ("{\"a\": [\"n\"]}", "7", "shards.replica_map", "7}"),
            ("{\"primary_map\": {\"a\": \"n\"}, \"replica_map\": {\"a\": [\"n\"]}}", "3", "shards", "3}"),
            ("{\"error_count\": 0, \"request_count\": 0}", "null", "server", "null,"),
        ];
        for (from, to, field, at) in cases {
            let text = BASE.replacen(from, to, 1);
            let err = Snapshot::parse(text.as_bytes()).unwrap_err();
            assert_eq!((err.code(), err.field()), (ErrorCode::SnapshotField, Some(field)), "{to}");
            let offset = err.offset().unwrap() as usize;
            assert!(text[offset..].starts_with(at) || (field == "membership.healthy"), "{to}: {}", &text[offset..]);
        }
        let text = BASE.replace("\"node_id\": \"n\", ", "");
        let err = Snapshot::parse(text.as_bytes()).unwrap_err();
        assert_eq!(err.field(), Some("membership.node_id"));
        assert_eq!(&text[err.offset().unwrap() as usize..][..1], "}");
    }

    #[test]
    fn unsorted_maps_are_searched_for_repeats() {
        let text = BASE.replace("{\"a\": \"n\"}", "{\"b\": \"n\", \"a\": \"m\", \"\\u0062\": \"o\"}");
        let err = Snapshot::parse(text.as_bytes()).unwrap_err();
        assert_eq!(
            (err.code(), err.offset()),
            (ErrorCode::SnapshotJson, Some(text.find("\"\\u0062\"").unwrap() as u64))
        );
        let text = BASE.replace("{\"a\": \"n\"}", "{\"b\": \"n\", \"a\": \"m\"}");
        let snapshot = Snapshot::parse(text.as_bytes()).unwrap();
        assert_eq!(snapshot.primary_map().len(), 2);
    }

    /// A map with a bad value is read event by event; a key repeated in it is still a
    /// JSON problem, which wins over the bad value, in either map.
    #[test]
    fn a_repeat_in_a_map_with_a_bad_value_is_still_found() {
        for (from, to) in
            [("{\"a\": \"n\"}", "{\"a\": 1, \"a\": \"m\"}"), ("{\"a\": [\"n\"]}", "{\"a\": 5, \"a\": [\"n\"]}")]
        {
            let text = BASE.replace(from, to);
            let err = Snapshot::parse(text.as_bytes()).unwrap_err();
            let repeat = text.find(to).unwrap() + to.rfind("\"a\"").unwrap();
            assert_eq!((err.code(), err.offset()), (ErrorCode::SnapshotJson, Some(repeat as u64)), "{to}");
        }
        // In order, the same maps give the value's problem.
        let text = BASE.replace("{\"a\": \"n\"}", "{\"a\": 1, \"b\": \"m\"}");
        assert_eq!(verdict(&text), Err((ErrorCode::SnapshotField, Some("shards.primary_map"))));
    }

    /// `schema_version` must be an integer, and then 5 or 2.
    #[test]
    fn schema_version_reasons() {
        for (version, reason) in [
            ("5.0", "schema_version must be an integer"),
            ("5e0", "schema_version must be an integer"),
            ("\"5\"", "schema_version must be an integer"),
            ("3", "schema_version is not 5 or 2"),
            ("-5", "schema_version is not 5 or 2"),
            ("99999999999999999999", "schema_version is not 5 or 2"),
        ] {
            let text = BASE.replace("\"schema_version\": 5", &std::format!("\"schema_version\": {version}"));
            let err = Snapshot::parse(text.as_bytes()).unwrap_err();
            assert_eq!((err.code(), err.reason()), (ErrorCode::SnapshotVersion, reason), "{version}");
            let at = text.find("\"schema_version\": ").unwrap() + "\"schema_version\": ".len();
            assert_eq!(err.offset(), Some(at as u64), "{version}");
        }
    }
}
