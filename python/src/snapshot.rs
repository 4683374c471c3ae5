//! Cluster snapshots (SPEC §5): `Snapshot` (a validated snapshot: parsed, built from
//! values or a dict, written in the v5 form), `SnapshotStore` (the atomic
//! `{state_dir}/{node_id}.json` files) and `epoch_accepted` (the epoch guard).
//!
//! A `Snapshot` keeps its text (as read, or the v5 text when built) and decodes a field
//! when it is asked for, as `PayloadIdentity` does.

use crate::buffer::{without_gil, Bytes};
use crate::errors::{self, OrRaise};
use crate::identity::py_text;
use membrane::snapshot::{self, Member, SnapshotStore};
use membrane::ErrorCode;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::PathBuf;

/// A validated cluster snapshot (SPEC §5).
#[pyclass(frozen, module = "membrane_frame", name = "Snapshot")]
pub struct PySnapshot {
    text: Box<[u8]>,
}

impl PySnapshot {
    fn parsed(&self, py: Python<'_>) -> PyResult<snapshot::Snapshot<'_>> {
        snapshot::Snapshot::parse(&self.text).or_raise(py)
    }

    fn written(snapshot: &snapshot::Snapshot<'_>) -> Box<[u8]> {
        let mut out = vec![0u8; snapshot.encoded_len()];
        let written = snapshot.write_into(&mut out).unwrap_or(0);
        out.truncate(written);
        out.into_boxed_slice()
    }
}

/// `snapshot_field` for a Python value that cannot be the field at `path`.
fn field_error(py: Python<'_>, path: &str, reason: &str) -> PyErr {
    errors::raise(py, ErrorCode::SnapshotField, None, Some(path), reason, format!("snapshot_field ({path}): {reason}"))
}

/// The values of one member, owned until the snapshot is written.
struct OwnedMember {
    node_id: String,
    host: String,
    port: u16,
    cluster_epoch: Option<u64>,
    healthy: Option<bool>,
    suspect: Option<bool>,
    missed_heartbeats: Option<u64>,
}

/// Keys of a dict, each looked up once; what is left at the end is unknown.
struct Fields<'py> {
    dict: Bound<'py, PyDict>,
    path: &'static str,
    taken: Vec<&'static str>,
}

impl<'py> Fields<'py> {
    fn of(py: Python<'py>, value: &Bound<'py, PyAny>, path: &'static str) -> PyResult<Fields<'py>> {
        let dict = value.cast::<PyDict>().map_err(|_| field_error(py, path, "must be an object (dict)"))?.clone();
        Ok(Fields { dict, path, taken: Vec::new() })
    }

    fn optional(&mut self, key: &'static str) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.taken.push(key);
        Ok(self.dict.get_item(key)?.filter(|value| !value.is_none()))
    }

    fn required(&mut self, key: &'static str) -> PyResult<Bound<'py, PyAny>> {
        let py = self.dict.py();
        self.optional(key)?.ok_or_else(|| field_error(py, key, "missing"))
    }

    /// `value` as a `T` (a string, a boolean), else `snapshot_field` for `key`.
    fn typed<T: for<'a> FromPyObject<'a, 'py>>(&self, value: &Bound<'py, PyAny>, key: &str, rule: &str) -> PyResult<T> {
        value.extract::<T>().map_err(|_| field_error(self.dict.py(), key, rule))
    }

    /// [`typed`](Self::typed) for a number: Python's `True` is an `int`, but JSON's
    /// `true` is not a number.
    fn number<T: for<'a> FromPyObject<'a, 'py>>(
        &self,
        value: &Bound<'py, PyAny>,
        key: &str,
        rule: &str,
    ) -> PyResult<T> {
        if value.is_instance_of::<pyo3::types::PyBool>() {
            return Err(field_error(self.dict.py(), key, rule));
        }
        self.typed(value, key, rule)
    }

    /// Every key must have been looked up: a v5 writer has no place for others, and
    /// dropping them would lose them without a word.
    fn finish(self) -> PyResult<()> {
        for key in self.dict.keys() {
            let name = key.extract::<String>().unwrap_or_default();
            if !self.taken.iter().any(|taken| *taken == name) {
                let reason = format!("unknown key {name:?}: a v5 snapshot has no place for it");
                return Err(field_error(self.dict.py(), self.path, &reason));
            }
        }
        Ok(())
    }
}

fn member(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<OwnedMember> {
    let mut fields = Fields::of(py, value, "membership")?;
    let node_id = fields.required("node_id")?;
    let host = fields.required("host")?;
    let port = fields.required("port")?;
    let epoch = fields.optional("cluster_epoch")?;
    let healthy = fields.optional("healthy")?;
    let suspect = fields.optional("suspect")?;
    let missed = fields.optional("missed_heartbeats")?;
    let member = OwnedMember {
        node_id: fields.typed(&node_id, "membership.node_id", "must be a string")?,
        host: fields.typed(&host, "membership.host", "must be a string")?,
        port: fields.number(&port, "membership.port", "must be an integer in 0..=65535")?,
        cluster_epoch: epoch
            .map(|v| fields.number(&v, "membership.cluster_epoch", "must be an integer >= 0"))
            .transpose()?,
        healthy: healthy.map(|v| fields.typed(&v, "membership.healthy", "must be a boolean")).transpose()?,
        suspect: suspect.map(|v| fields.typed(&v, "membership.suspect", "must be a boolean")).transpose()?,
        missed_heartbeats: missed
            .map(|v| fields.number(&v, "membership.missed_heartbeats", "must be an integer >= 0"))
            .transpose()?,
    };
    fields.finish()?;
    Ok(member)
}

/// The values of a snapshot, owned while the core builds and writes it.
struct OwnedSnapshot {
    cluster_epoch: u64,
    captured_at: f64,
    members: Vec<OwnedMember>,
    primary: Vec<(String, String)>,
    replicas: Vec<(String, Vec<String>)>,
    request_count: u64,
    error_count: u64,
}

impl OwnedSnapshot {
    /// The v5 text, from the core's builder (which checks the field rules) and writer.
    fn write(&self, py: Python<'_>) -> PyResult<Box<[u8]>> {
        let members: Vec<Member<'_>> = self
            .members
            .iter()
            .map(|m| Member {
                cluster_epoch: m.cluster_epoch,
                healthy: m.healthy,
                suspect: m.suspect,
                missed_heartbeats: m.missed_heartbeats,
                ..Member::new(&m.node_id, &m.host, m.port)
            })
            .collect();
        let mut primary: Vec<(&str, &str)> = self.primary.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        primary.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let nodes: Vec<Vec<&str>> = self.replicas.iter().map(|(_, v)| v.iter().map(String::as_str).collect()).collect();
        let mut replicas: Vec<(&str, &[&str])> =
            self.replicas.iter().zip(&nodes).map(|((k, _), v)| (k.as_str(), v.as_slice())).collect();
        replicas.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let built = snapshot::Snapshot::builder(self.cluster_epoch, self.captured_at)
            .membership(&members)
            .primary_map(&primary)
            .replica_map(&replicas)
            .server(self.request_count, self.error_count)
            .build()
            .or_raise(py)?;
        Ok(PySnapshot::written(&built))
    }
}

fn string_map(py: Python<'_>, value: Option<Bound<'_, PyAny>>, path: &'static str) -> PyResult<Vec<(String, String)>> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let dict = value.cast::<PyDict>().map_err(|_| field_error(py, path, "must be an object of strings"))?;
    dict.iter()
        .map(|(k, v)| {
            let pair = (k.extract::<String>(), v.extract::<String>());
            match pair {
                (Ok(k), Ok(v)) => Ok((k, v)),
                _ => Err(field_error(py, path, "must map strings to strings")),
            }
        })
        .collect()
}

fn list_map(
    py: Python<'_>,
    value: Option<Bound<'_, PyAny>>,
    path: &'static str,
) -> PyResult<Vec<(String, Vec<String>)>> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let dict = value.cast::<PyDict>().map_err(|_| field_error(py, path, "must be an object of string lists"))?;
    dict.iter()
        .map(|(k, v)| {
            let key = k.extract::<String>().map_err(|_| field_error(py, path, "keys must be strings"))?;
            if v.is_instance_of::<pyo3::types::PyString>() {
                return Err(field_error(py, path, "values must be lists of strings"));
            }
            let nodes =
                v.extract::<Vec<String>>().map_err(|_| field_error(py, path, "values must be lists of strings"))?;
            Ok((key, nodes))
        })
        .collect()
}

#[pymethods]
impl PySnapshot {
    /// Build a snapshot (written as `schema_version` 5). Maps may be in any order; they
    /// are written sorted.
    #[new]
    #[pyo3(signature = (cluster_epoch, captured_at, membership = None, primary_map = None, replica_map = None, request_count = 0, error_count = 0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        cluster_epoch: i128,
        captured_at: f64,
        membership: Option<Bound<'_, PyAny>>,
        primary_map: Option<Bound<'_, PyAny>>,
        replica_map: Option<Bound<'_, PyAny>>,
        request_count: i128,
        error_count: i128,
    ) -> PyResult<PySnapshot> {
        let count = |value: i128, path: &str| {
            u64::try_from(value).map_err(|_| field_error(py, path, "must be an integer >= 0"))
        };
        let members = match membership {
            None => Vec::new(),
            Some(list) => {
                let list = list.cast::<PyList>().map_err(|_| field_error(py, "membership", "must be a list"))?;
                list.iter().map(|item| member(py, &item)).collect::<PyResult<Vec<_>>>()?
            }
        };
        let owned = OwnedSnapshot {
            cluster_epoch: count(cluster_epoch, "cluster_epoch")?,
            captured_at,
            members,
            primary: string_map(py, primary_map, "shards.primary_map")?,
            replicas: list_map(py, replica_map, "shards.replica_map")?,
            request_count: count(request_count, "server.request_count")?,
            error_count: count(error_count, "server.error_count")?,
        };
        Ok(PySnapshot { text: owned.write(py)? })
    }

    /// A snapshot from a dict of the SPEC §5 shape (as `json.loads` gives it, or as
    /// `to_dict` returns it). `schema_version`, when present, must be 5 or 2; a key the
    /// v5 form has no place for is `snapshot_field` rather than dropped.
    #[staticmethod]
    fn from_dict(py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<PySnapshot> {
        let mut top = Fields::of(py, values, "snapshot")?;
        if let Some(version) = top.optional("schema_version")? {
            let version: i64 = top.number(&version, "schema_version", "must be 5 or 2")?;
            if version != snapshot::SCHEMA_VERSION && version != snapshot::LEGACY_SCHEMA_VERSION {
                let reason = format!("schema_version {version} is not 5 or 2");
                return Err(errors::raise(
                    py,
                    ErrorCode::SnapshotVersion,
                    None,
                    Some("schema_version"),
                    "schema_version must be 5 or 2",
                    format!("snapshot_version (schema_version): {reason}"),
                ));
            }
        }
        let epoch = top.required("cluster_epoch")?;
        let captured = top.required("captured_at")?;
        let membership = top.required("membership")?;
        let shards = top.required("shards")?;
        let server = top.required("server")?;
        let epoch: i128 = top.number(&epoch, "cluster_epoch", "must be an integer >= 0")?;
        let captured: f64 = top.number(&captured, "captured_at", "must be a number >= 0")?;
        top.finish()?;
        let mut shard_fields = Fields::of(py, &shards, "shards")?;
        let primary = shard_fields.required("primary_map")?;
        let replica = shard_fields.required("replica_map")?;
        shard_fields.finish()?;
        let mut server_fields = Fields::of(py, &server, "server")?;
        let requests = server_fields.required("request_count")?;
        let failures = server_fields.required("error_count")?;
        let requests: i128 = server_fields.number(&requests, "server.request_count", "must be an integer >= 0")?;
        let failures: i128 = server_fields.number(&failures, "server.error_count", "must be an integer >= 0")?;
        server_fields.finish()?;
        PySnapshot::new(py, epoch, captured, Some(membership), Some(primary), Some(replica), requests, failures)
    }

    /// Parse and validate snapshot text (schema 5 or 2); raises `SchemaError`.
    #[staticmethod]
    fn parse(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PySnapshot> {
        let bytes = Bytes::of(data)?;
        let slice = bytes.as_slice();
        without_gil(py, slice.len(), || snapshot::Snapshot::parse(slice).map(|_| ())).or_raise(py)?;
        Ok(PySnapshot { text: slice.into() })
    }

    /// The fields as a dict of the SPEC §5 shape (`schema_version` as read).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let parsed = self.parsed(py)?;
        let dict = PyDict::new(py);
        dict.set_item("captured_at", parsed.captured_at())?;
        dict.set_item("cluster_epoch", parsed.cluster_epoch())?;
        dict.set_item("membership", membership_list(py, &parsed)?)?;
        dict.set_item("schema_version", parsed.schema_version())?;
        let server = PyDict::new(py);
        server.set_item("error_count", parsed.error_count())?;
        server.set_item("request_count", parsed.request_count())?;
        dict.set_item("server", server)?;
        let shards = PyDict::new(py);
        shards.set_item("primary_map", primary_dict(py, &parsed)?)?;
        shards.set_item("replica_map", replica_dict(py, &parsed)?)?;
        dict.set_item("shards", shards)?;
        Ok(dict)
    }

    /// The v5 text (SPEC §5 writer: keys sorted, `", "` / `": "`, ASCII escapes).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &PySnapshot::written(&self.parsed(py)?)))
    }

    /// The text as read (or the v5 text, when built).
    #[getter]
    fn source<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.text)
    }

    /// Whether the kept text is already the v5 text.
    #[getter]
    fn is_canonical(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.parsed(py)?.is_canonical())
    }

    #[getter]
    fn schema_version(&self, py: Python<'_>) -> PyResult<i64> {
        Ok(self.parsed(py)?.schema_version())
    }

    #[getter]
    fn cluster_epoch(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.parsed(py)?.cluster_epoch())
    }

    #[getter]
    fn captured_at(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.parsed(py)?.captured_at())
    }

    #[getter]
    fn request_count(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.parsed(py)?.request_count())
    }

    #[getter]
    fn error_count(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.parsed(py)?.error_count())
    }

    /// The members, as dicts with the keys each has.
    #[getter]
    fn membership<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        membership_list(py, &self.parsed(py)?)
    }

    /// `shards.primary_map`: content hash to node id.
    #[getter]
    fn primary_map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        primary_dict(py, &self.parsed(py)?)
    }

    /// `shards.replica_map`: content hash to a list of node ids.
    #[getter]
    fn replica_map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        replica_dict(py, &self.parsed(py)?)
    }

    /// The same snapshot with another `cluster_epoch` (written in the v5 form).
    fn with_cluster_epoch(&self, py: Python<'_>, cluster_epoch: u64) -> PyResult<PySnapshot> {
        Ok(PySnapshot { text: PySnapshot::written(&self.parsed(py)?.with_cluster_epoch(cluster_epoch)) })
    }

    /// Pickling and `copy`: the snapshot is rebuilt from its kept text.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let restore = py.import("membrane_frame._native")?.getattr("Snapshot")?.getattr("parse")?;
        Ok((restore, (PyBytes::new(py, &self.text),)))
    }

    /// Equal when the v5 texts are.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        match other.cast::<PySnapshot>() {
            Ok(other) => Ok(PySnapshot::written(&self.parsed(py)?) == PySnapshot::written(&other.get().parsed(py)?)),
            Err(_) => Ok(false),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let parsed = self.parsed(py)?;
        Ok(format!(
            "Snapshot(cluster_epoch={}, captured_at={}, members={}, primary_map={} entries)",
            parsed.cluster_epoch(),
            parsed.captured_at(),
            parsed.membership().len(),
            parsed.primary_map().len()
        ))
    }
}

/// The members, as dicts with the keys each has.
fn membership_list<'py>(py: Python<'py>, parsed: &snapshot::Snapshot<'_>) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for member in parsed.membership().iter() {
        let dict = PyDict::new(py);
        if let Some(epoch) = member.cluster_epoch {
            dict.set_item("cluster_epoch", epoch)?;
        }
        if let Some(healthy) = member.healthy {
            dict.set_item("healthy", healthy)?;
        }
        dict.set_item("host", py_text(py, &member.host))?;
        if let Some(missed) = member.missed_heartbeats {
            dict.set_item("missed_heartbeats", missed)?;
        }
        dict.set_item("node_id", py_text(py, &member.node_id))?;
        dict.set_item("port", member.port)?;
        if let Some(suspect) = member.suspect {
            dict.set_item("suspect", suspect)?;
        }
        list.append(dict)?;
    }
    Ok(list)
}

/// `shards.primary_map` as a dict.
fn primary_dict<'py>(py: Python<'py>, parsed: &snapshot::Snapshot<'_>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (hash, node) in parsed.primary_map().iter() {
        dict.set_item(py_text(py, &hash), py_text(py, &node))?;
    }
    Ok(dict)
}

/// `shards.replica_map` as a dict of lists.
fn replica_dict<'py>(py: Python<'py>, parsed: &snapshot::Snapshot<'_>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (hash, nodes) in parsed.replica_map().iter() {
        let list = PyList::empty(py);
        for node in nodes.iter() {
            list.append(py_text(py, &node))?;
        }
        dict.set_item(py_text(py, &hash), list)?;
    }
    Ok(dict)
}

/// The snapshot files of one state directory (`{state_dir}/{node_id}.json`), written
/// atomically (temp file, fsync, rename, fsync of the directory).
#[pyclass(frozen, module = "membrane_frame", name = "SnapshotStore")]
pub struct Store {
    store: SnapshotStore,
}

#[pymethods]
impl Store {
    /// The store of `state_dir`, which must exist.
    #[new]
    fn new(state_dir: PathBuf) -> Store {
        Store { store: SnapshotStore::new(state_dir) }
    }

    /// The state directory.
    #[getter]
    fn state_dir(&self) -> PathBuf {
        self.store.dir().to_path_buf()
    }

    /// `{state_dir}/{node_id}.json`; `UsageError` for a node id that cannot be a file
    /// name.
    fn path_for(&self, py: Python<'_>, node_id: &str) -> PyResult<PathBuf> {
        self.store.path_for(node_id).or_raise(py)
    }

    /// Write `snapshot` as `{node_id}.json` atomically; returns the path.
    fn save(&self, py: Python<'_>, node_id: &str, snapshot: PyRef<'_, PySnapshot>) -> PyResult<PathBuf> {
        let parsed = snapshot.parsed(py)?;
        py.detach(|| self.store.save(node_id, &parsed)).or_raise(py)
    }

    /// Bump `live_epoch` by one and save `snapshot` with that epoch; returns
    /// `(path, new_epoch)`. The bump stands even when the save fails.
    fn checkpoint(
        &self,
        py: Python<'_>,
        node_id: &str,
        live_epoch: u64,
        snapshot: PyRef<'_, PySnapshot>,
    ) -> PyResult<(PathBuf, u64)> {
        let parsed = snapshot.parsed(py)?;
        let mut epoch = live_epoch;
        let path = py.detach(|| self.store.checkpoint(node_id, &mut epoch, &parsed)).or_raise(py)?;
        Ok((path, epoch))
    }

    /// Read `{node_id}.json` (no epoch guard). `UsageError` (`io`) when it cannot be
    /// read, `SchemaError` when it is not a valid snapshot.
    fn load(&self, py: Python<'_>, node_id: &str) -> PyResult<PySnapshot> {
        let mut buf = Vec::new();
        py.detach(|| self.store.load(node_id, &mut buf).map(|_| ())).or_raise(py)?;
        Ok(PySnapshot { text: buf.into_boxed_slice() })
    }

    /// Read `{node_id}.json` through the epoch guard: a snapshot two or more epochs
    /// behind `live_epoch` is `stale_epoch` and its file is deleted.
    fn restore(&self, py: Python<'_>, node_id: &str, live_epoch: u64) -> PyResult<PySnapshot> {
        let mut buf = Vec::new();
        py.detach(|| self.store.restore(node_id, live_epoch, &mut buf).map(|_| ())).or_raise(py)?;
        Ok(PySnapshot { text: buf.into_boxed_slice() })
    }

    /// `(path, snapshot)` of the largest `captured_at` in the directory (ties to the
    /// first file name), skipping files that are not valid snapshots; None when there
    /// is none.
    fn latest(&self, py: Python<'_>) -> PyResult<Option<(PathBuf, PySnapshot)>> {
        let mut buf = Vec::new();
        let path = py.detach(|| self.store.latest(&mut buf).map(|found| found.map(|(path, _)| path))).or_raise(py)?;
        Ok(path.map(|path| (path, PySnapshot { text: buf.into_boxed_slice() })))
    }

    fn __repr__(&self) -> String {
        format!("SnapshotStore({:?})", self.store.dir())
    }
}

/// The epoch guard (SPEC §5): whether a snapshot with `persisted` epoch (None when it
/// has none) may be restored under `live_epoch` (`persisted >= live_epoch - 1`).
#[pyfunction]
pub fn epoch_accepted(live_epoch: u64, persisted: Option<i128>) -> bool {
    match persisted {
        None => snapshot::check_epoch(live_epoch, None).is_ok(),
        // An epoch is an integer >= 0: a negative one is not a valid epoch.
        Some(epoch) => u64::try_from(epoch).is_ok_and(|epoch| snapshot::check_epoch(live_epoch, Some(epoch)).is_ok()),
    }
}
