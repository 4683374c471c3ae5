//! Snapshot files (SPEC §5): crash safety of the atomic save, the epoch guard, and the
//! latest snapshot of a directory.
//!
//! The crash tests re-run this test binary as a child writer (`snapshot_writer_child`,
//! selected by an environment variable) and kill it — at random moments while it saves
//! in a loop, or by its own SIGKILL right after each step of a save — then check that the
//! snapshot file is always the complete old or the complete new one.

use membrane_frame::snapshot::{Member, SaveStep, Snapshot, SnapshotStore};
use membrane_frame::ErrorCode;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const CHILD_DIR: &str = "MEMBRANE_SNAPSHOT_CHILD_DIR";
const CHILD_MODE: &str = "MEMBRANE_SNAPSHOT_CHILD_MODE";
const NODE: &str = "node-7";

/// A fresh, empty directory for one test.
fn test_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("snapshot-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The text of generation `k`: a deterministic snapshot of about 35 KB with epoch `k`,
/// so a torn or mixed file can never pass for a complete one.
fn generation(k: u64) -> Vec<u8> {
    let primary_keys: Vec<String> = (0..200).map(|i| format!("{k:08}-{i:05}-{}", "ab".repeat(20))).collect();
    let nodes: Vec<String> = (0..8).map(|i| format!("n\u{e9}-{i}")).collect();
    let primary: Vec<(&str, &str)> =
        primary_keys.iter().enumerate().map(|(i, key)| (key.as_str(), nodes[i % 8].as_str())).collect();
    let replica_nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let replica: Vec<(&str, &[&str])> =
        primary_keys.iter().enumerate().map(|(i, key)| (key.as_str(), &replica_nodes[i % 5..i % 5 + 3])).collect();
    let members: Vec<Member<'_>> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| Member {
            cluster_epoch: Some(k),
            healthy: Some(i % 3 != 0),
            ..Member::new(node, "10.0.0.1", 7000 + i as u16)
        })
        .collect();
    let snapshot = Snapshot::builder(k, 1_735_600_000.0 + k as f64 / 4.0)
        .membership(&members)
        .primary_map(&primary)
        .replica_map(&replica)
        .server(k * 1000, k)
        .build()
        .unwrap();
    let mut out = vec![0u8; snapshot.encoded_len()];
    snapshot.write_into(&mut out).unwrap();
    out
}

fn save_generation(store: &SnapshotStore, k: u64) {
    let text = generation(k);
    store.save(NODE, &Snapshot::parse(&text).unwrap()).unwrap();
}

/// The generation the snapshot file holds, checking that it is complete: it parses and
/// is byte for byte the text of that generation.
fn complete_generation(store: &SnapshotStore) -> u64 {
    let bytes = std::fs::read(store.path_for(NODE).unwrap()).expect("the snapshot file is gone");
    let snapshot = Snapshot::parse(&bytes).unwrap_or_else(|e| panic!("torn snapshot ({} bytes): {e}", bytes.len()));
    let k = snapshot.cluster_epoch();
    assert!(bytes == generation(k), "generation {k} differs from its complete text");
    k
}

/// Time one save of one generation (parse and atomic write), as the child does it.
fn save_duration(store: &SnapshotStore) -> Duration {
    let text = generation(0);
    let start = std::time::Instant::now();
    for _ in 0..3 {
        store.save(NODE, &Snapshot::parse(&text).unwrap()).unwrap();
    }
    start.elapsed() / 3
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().ends_with(".tmp"))
        .collect()
}

/// The child writer: does nothing in a normal test run.
#[test]
fn snapshot_writer_child() {
    let (Some(dir), Some(mode)) = (std::env::var_os(CHILD_DIR), std::env::var(CHILD_MODE).ok()) else {
        return;
    };
    let store = SnapshotStore::new(PathBuf::from(dir));
    let mut k = complete_generation(&store);
    if mode == "loop" {
        // The next texts are ready before the parent starts its clock, so most of the
        // time until the kill is spent saving.
        let ahead: Vec<Vec<u8>> = (k + 1..k + 4).map(generation).collect();
        println!("READY");
        for text in &ahead {
            store.save(NODE, &Snapshot::parse(text).unwrap()).unwrap();
        }
        k += 3;
        loop {
            k += 1;
            save_generation(&store, k);
        }
    }
    let step = SaveStep::ALL.into_iter().find(|s| format!("{s:?}") == mode).expect("unknown child mode");
    let text = generation(k + 1);
    let snapshot = Snapshot::parse(&text).unwrap();
    let _ = store.save_observed(NODE, &snapshot, |done| {
        if done == step {
            die_now();
        }
        Ok(())
    });
    panic!("the save did not reach {step:?}");
}

/// A crash: the process ends at once, running no destructor or handler. SIGKILL rather
/// than `abort()`: under QEMU user mode a guest's SIGABRT goes through QEMU's own signal
/// emulation and core dump, which can hang; a guest's kill(SIGKILL) is the host kernel's.
fn die_now() -> ! {
    // SAFETY: kill(2) with this process's own id and a constant signal number; it touches
    // no memory of ours.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    unreachable!("SIGKILL did not end the process");
}

/// This test binary again, as a child in `mode`. Under an emulator (QEMU user mode, which
/// the kernel does not know to start a foreign binary with) the child is started through
/// the same emulator: `MEMBRANE_TEST_RUNNER`, the runner command scripts/cross-check.sh
/// gives cargo.
fn child(dir: &Path, mode: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    let runner = std::env::var("MEMBRANE_TEST_RUNNER").unwrap_or_default();
    let mut words = runner.split_whitespace();
    let mut command = match words.next() {
        Some(emulator) => {
            let mut command = Command::new(emulator);
            command.args(words).arg(exe);
            command
        }
        None => Command::new(exe),
    };
    command
        .args(["snapshot_writer_child", "--exact", "--nocapture", "--test-threads=1", "--quiet"])
        .env(CHILD_DIR, dir)
        .env(CHILD_MODE, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command
}

/// xorshift64*, seeded from the clock (the seed is printed to reproduce a failure).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn killing_the_writer_at_random_moments_leaves_the_old_or_the_new_file() {
    let iterations: u32 = std::env::var("MEMBRANE_CRASH_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("crash test: {iterations} kills, seed {seed:#x}");
    let mut rng = Rng(seed);
    let dir = test_dir("kill");
    let store = SnapshotStore::new(&dir);
    let save_time = save_duration(&store);
    eprintln!("crash test: one save takes {save_time:?}");
    let window = (save_time * 4).as_micros() as u64 + 1;
    let (mut last, mut torn_saves, mut advanced) = (0u64, 0usize, 0usize);
    for i in 0..iterations {
        let mut process = child(&dir, "loop").spawn().unwrap();
        let mut stdout = BufReader::new(process.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("READY") {
            line.clear();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the child writer died before it was ready");
        }
        // Kill at a random moment within the first four saves.
        std::thread::sleep(Duration::from_micros(rng.next() % window));
        process.kill().unwrap();
        process.wait().unwrap();
        let k = complete_generation(&store);
        assert!(k >= last, "iteration {i}: generation went back from {last} to {k}");
        advanced += usize::from(k > last);
        last = k;
        // Temp files are what a killed save leaves behind (a successful one never does).
        let leftovers = temp_files(&dir);
        torn_saves += leftovers.len();
        for file in leftovers {
            std::fs::remove_file(file).unwrap();
        }
    }
    eprintln!("crash test: {advanced} kills found a newer complete generation, {torn_saves} kills interrupted a save (temp file left), last generation {last}");
    // Both kinds of moment were hit: the test did test something.
    assert!(advanced > 0, "no save ever completed before a kill");
    assert!(torn_saves > 0, "no kill landed in the middle of a save");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_crash_right_after_each_step_leaves_the_old_or_the_new_file() {
    for step in SaveStep::ALL {
        let dir = test_dir(&format!("crash-{step:?}"));
        let store = SnapshotStore::new(&dir);
        save_generation(&store, 41);
        let status = child(&dir, &format!("{step:?}")).status().unwrap();
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "{step:?}: the child was expected to die by its own SIGKILL, not {status}"
        );
        let renamed = matches!(step, SaveStep::Renamed | SaveStep::DirectorySynced);
        assert_eq!(complete_generation(&store), if renamed { 42 } else { 41 }, "{step:?}");
        // A crash before the rename leaves its temp file (it cannot clean up); after it, none.
        assert_eq!(temp_files(&dir).len(), usize::from(!renamed), "{step:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_failure_at_each_step_leaves_the_old_or_the_new_file_and_no_temp_file() {
    for step in SaveStep::ALL {
        let dir = test_dir(&format!("fault-{step:?}"));
        let store = SnapshotStore::new(&dir);
        save_generation(&store, 1);
        let text = generation(2);
        let snapshot = Snapshot::parse(&text).unwrap();
        let fail = |done: SaveStep| if done == step { Err(std::io::Error::other("injected")) } else { Ok(()) };
        let err = store.save_observed(NODE, &snapshot, fail).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Io, "{step:?}");
        let renamed = matches!(step, SaveStep::Renamed | SaveStep::DirectorySynced);
        assert_eq!(complete_generation(&store), if renamed { 2 } else { 1 }, "{step:?}");
        assert!(temp_files(&dir).is_empty(), "{step:?}: a failed save left its temp file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_successful_save_leaves_no_temp_file_and_reports_every_step() {
    let dir = test_dir("clean");
    let store = SnapshotStore::new(&dir);
    for k in 0..5 {
        let text = generation(k);
        let mut steps = Vec::new();
        let path = store
            .save_observed(NODE, &Snapshot::parse(&text).unwrap(), |step| {
                steps.push(step);
                Ok(())
            })
            .unwrap();
        assert_eq!(steps, SaveStep::ALL);
        assert_eq!(path, dir.join("node-7.json"));
        assert!(temp_files(&dir).is_empty());
        assert_eq!(complete_generation(&store), k);
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn node_ids_that_are_not_file_names_are_refused() {
    let store = SnapshotStore::new(test_dir("names"));
    for bad in ["", "../x", "a/b", "a\\b", ".hidden", "a\0b", &"n".repeat(129)] {
        assert_eq!(store.path_for(bad).unwrap_err().code(), ErrorCode::InvalidArgument, "{bad:?}");
    }
    assert!(store.path_for("n\u{e9}-1").is_ok());
    std::fs::remove_dir_all(store.dir()).unwrap();
}

/// A snapshot text with the given epoch (`None`: the key is left out).
fn snapshot_text(epoch: Option<u64>) -> Vec<u8> {
    let snapshot = Snapshot::builder(epoch.unwrap_or(0), 5.0).server(1, 0).build().unwrap();
    let mut out = vec![0u8; snapshot.encoded_len()];
    snapshot.write_into(&mut out).unwrap();
    match epoch {
        Some(_) => out,
        None => String::from_utf8(out).unwrap().replacen("\"cluster_epoch\": 0, ", "", 1).into_bytes(),
    }
}

#[test]
fn epoch_guard_table() {
    // (live epoch, persisted epoch) -> accepted?
    let cases: &[(&str, u64, Option<u64>, bool)] = &[
        ("equal", 10, Some(10), true),
        ("one behind", 10, Some(9), true),
        ("two behind", 10, Some(8), false),
        ("far behind", 10, Some(0), false),
        ("one ahead", 10, Some(11), true),
        ("far ahead", 10, Some(u64::MAX), true),
        ("missing", 10, None, false),
        ("missing at live 0", 0, None, false),
        ("live 0", 0, Some(0), true),
        ("live 1, persisted 0", 1, Some(0), true),
        ("live 2, persisted 0", 2, Some(0), false),
        ("live max, persisted max-1", u64::MAX, Some(u64::MAX - 1), true),
        ("live max, persisted max-2", u64::MAX, Some(u64::MAX - 2), false),
    ];
    let dir = test_dir("guard");
    let store = SnapshotStore::new(&dir);
    let path = store.path_for(NODE).unwrap();
    let mut buf = Vec::new();
    for &(name, live, persisted, accepted) in cases {
        std::fs::write(&path, snapshot_text(persisted)).unwrap();
        let result = store.restore(NODE, live, &mut buf);
        match result {
            Ok(snapshot) => {
                assert!(accepted, "{name}: accepted");
                assert_eq!(Some(snapshot.cluster_epoch()), persisted, "{name}");
                assert!(path.exists(), "{name}: an accepted snapshot was deleted");
            }
            Err(err) => {
                assert!(!accepted, "{name}: rejected with {err}");
                assert_eq!(err.code(), ErrorCode::StaleEpoch, "{name}");
                assert!(!path.exists(), "{name}: a rejected snapshot is still there");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unreadable_or_wrong_version_files_are_left_untouched_by_restore() {
    let dir = test_dir("untouched");
    let store = SnapshotStore::new(&dir);
    let path = store.path_for(NODE).unwrap();
    let stale = String::from_utf8(snapshot_text(Some(1))).unwrap();
    let cases: Vec<(&str, Vec<u8>, ErrorCode)> = vec![
        ("not JSON", b"\x00\xffgarbage".to_vec(), ErrorCode::SnapshotJson),
        ("truncated", stale.as_bytes()[..stale.len() / 2].to_vec(), ErrorCode::SnapshotJson),
        ("empty", Vec::new(), ErrorCode::SnapshotJson),
        (
            "schema 3",
            stale.replace("\"schema_version\": 5", "\"schema_version\": 3").into_bytes(),
            ErrorCode::SnapshotVersion,
        ),
        ("no schema", stale.replace("\"schema_version\": 5, ", "").into_bytes(), ErrorCode::SnapshotVersion),
        // Stale, but also broken: not understood, so not deleted either.
        (
            "broken field",
            stale.replace("\"captured_at\": 5.0", "\"captured_at\": -5.0").into_bytes(),
            ErrorCode::SnapshotField,
        ),
    ];
    let mut buf = Vec::new();
    for (name, bytes, code) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let err = store.restore(NODE, 100, &mut buf).unwrap_err();
        assert_eq!(err.code(), code, "{name}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name}: the file was changed");
    }
    std::fs::remove_file(&path).unwrap();
    assert_eq!(store.restore(NODE, 100, &mut buf).unwrap_err().code(), ErrorCode::Io);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn checkpoint_bumps_the_epoch_before_writing() {
    let dir = test_dir("checkpoint");
    let store = SnapshotStore::new(&dir);
    let mut live = 41;
    let snapshot = Snapshot::builder(3, 1.0).build().unwrap();
    store.checkpoint(NODE, &mut live, &snapshot).unwrap();
    assert_eq!(live, 42);
    let mut buf = Vec::new();
    assert_eq!(store.load(NODE, &mut buf).unwrap().cluster_epoch(), 42);
    assert_eq!(store.restore(NODE, live, &mut buf).unwrap().cluster_epoch(), 42);
    let mut max = u64::MAX;
    assert_eq!(store.checkpoint(NODE, &mut max, &snapshot).unwrap_err().code(), ErrorCode::InvalidArgument);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn latest_takes_the_largest_captured_at_ties_to_the_first_and_skips_unreadable_files() {
    let dir = test_dir("latest");
    let store = SnapshotStore::new(&dir);
    let mut buf = Vec::new();
    assert!(store.latest(&mut buf).unwrap().is_none());
    let text = |captured_at: f64, epoch: u64| {
        let snapshot = Snapshot::builder(epoch, captured_at).build().unwrap();
        let mut out = vec![0u8; snapshot.encoded_len()];
        snapshot.write_into(&mut out).unwrap();
        out
    };
    std::fs::write(dir.join("a.json"), text(5.0, 1)).unwrap();
    std::fs::write(dir.join("b.json"), text(9.0, 2)).unwrap();
    std::fs::write(dir.join("c.json"), text(9.0, 3)).unwrap(); // a tie: b was seen first
    std::fs::write(dir.join("d.json"), b"{\"captured_at\": 99.0").unwrap(); // unreadable
    let v3 = String::from_utf8(text(50.0, 4)).unwrap().replace("\"schema_version\": 5", "\"schema_version\": 3");
    std::fs::write(dir.join("e.json"), v3).unwrap(); // wrong version
    std::fs::write(dir.join(".f.0123.tmp"), text(70.0, 5)).unwrap(); // a temp file
    std::fs::write(dir.join("g.txt"), text(80.0, 6)).unwrap(); // not a snapshot name
    let (path, snapshot) = store.latest(&mut buf).unwrap().unwrap();
    assert_eq!(path, dir.join("b.json"));
    assert_eq!(snapshot.cluster_epoch(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(store.latest(&mut buf).unwrap_err().code(), ErrorCode::Io);
}

#[test]
fn a_save_that_cannot_create_or_rename_its_temp_file_is_an_io_error_and_leaves_no_temp_file() {
    let text = generation(1);
    let snapshot = Snapshot::parse(&text).unwrap();
    // No directory to create the temp file in.
    let missing = test_dir("missing").join("absent");
    let err = SnapshotStore::new(&missing).save(NODE, &snapshot).unwrap_err();
    assert_eq!((err.code(), err.reason()), (ErrorCode::Io, "cannot create the temp file"));
    // A non-empty directory where the snapshot would go: the rename fails.
    let dir = test_dir("rename");
    std::fs::create_dir_all(dir.join("node-7.json").join("inside")).unwrap();
    let err = SnapshotStore::new(&dir).save(NODE, &snapshot).unwrap_err();
    assert_eq!((err.code(), err.reason()), (ErrorCode::Io, "cannot rename the temp file onto the snapshot"));
    assert!(temp_files(&dir).is_empty());
    assert!(dir.join("node-7.json").join("inside").is_dir());
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(missing.parent().unwrap()).unwrap();
}
