//! `membrane-frame migrate`: dry run, exact v5 results (the migration vectors),
//! idempotence, damaged inputs left alone, and crash safety — killed at random moments,
//! every file is always either its complete original or its complete v5 form.

mod common;

use common::*;
use membrane_frame::migrate::{migrate_envelope_into, migrate_frame_in_place, EnvelopeMigrationOptions};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

/// A tree to migrate: relative path -> (original bytes, bytes after migration).
type Tree = BTreeMap<String, (Vec<u8>, Vec<u8>)>;

fn v5_envelope(text: &str) -> String {
    let mut out = vec![0u8; 4096];
    let outcome = migrate_envelope_into(text.as_bytes(), &EnvelopeMigrationOptions::new(), &mut out).unwrap();
    match outcome {
        membrane_frame::migrate::EnvelopeMigration::Rewritten { len, .. } => {
            String::from_utf8(out[..len].to_vec()).unwrap()
        }
        membrane_frame::migrate::EnvelopeMigration::AlreadyV5 => text.to_string(),
    }
}

fn migration_vectors() -> Vec<Value> {
    fs::read_to_string(vectors_dir().join("migration_envelopes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Legacy frames (from the vectors and generated), envelopes, JSON lines, v5 frames,
/// a damaged legacy frame and a file that is none of these.
fn build_tree(frames: usize, frame_size: usize) -> Tree {
    let vectors = vectors_dir();
    let mut tree = Tree::new();
    for line in fs::read_to_string(vectors.join("migration_frames.jsonl")).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let input = fs::read(vectors.join(v["input"].as_str().unwrap())).unwrap();
        let expected = fs::read(vectors.join(v["expected_v5"].as_str().unwrap())).unwrap();
        tree.insert(format!("vectors/{}.blob", v["name"].as_str().unwrap()), (input, expected));
    }
    for i in 0..frames {
        let v5 = frame(&bytes(frame_size + i * 1000, i as u64));
        let old = legacy(&v5, if i % 2 == 0 { 4 } else { 2 });
        let mut migrated = old.clone();
        migrate_frame_in_place(&mut migrated).unwrap();
        assert_eq!(migrated, v5);
        // Some by extension, some found by their magic only.
        let name = if i % 3 == 0 { format!("kv/shard-{i:02}.frame") } else { format!("kv/shard-{i:02}.blob") };
        tree.insert(name, (old, v5));
    }
    let v5 = frame(&bytes(2000, 99));
    tree.insert("kv/current.frame".into(), (v5.clone(), v5.clone()));
    let mut damaged = legacy(&v5, 4);
    let at = damaged.len() - 20;
    damaged[at] ^= 1;
    tree.insert("kv/damaged.blob".into(), (damaged.clone(), damaged));
    tree.insert("kv/README.txt".into(), (b"notes\n".to_vec(), b"notes\n".to_vec()));

    let envelopes = migration_vectors();
    let mut lines_in = String::new();
    let mut lines_out = String::new();
    for (i, v) in envelopes.iter().enumerate() {
        let input = v["input"].as_str().unwrap();
        let expected = v["expected_v5"].as_str().unwrap();
        assert_eq!(v5_envelope(input), expected, "the library agrees with the vector");
        if i < 3 {
            tree.insert(
                format!("env/message-{i}.json"),
                (format!("{input}\n").into_bytes(), format!("{expected}\n").into_bytes()),
            );
        }
        lines_in.push_str(input);
        lines_in.push('\n');
        lines_out.push_str(expected);
        lines_out.push('\n');
    }
    lines_in.push_str("\n{\"not\": \"an envelope\"}\r\n");
    lines_out.push_str("\n{\"not\": \"an envelope\"}\r\n");
    tree.insert("env/outbox.jsonl".into(), (lines_in.into_bytes(), lines_out.into_bytes()));
    tree
}

fn write_tree(root: &Path, tree: &Tree) {
    let _ = fs::remove_dir_all(root);
    for (name, (original, _)) in tree {
        let path = root.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, original).unwrap();
    }
}

/// Every file in the tree, except our temporary files.
fn files_on_disk(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') && name.ends_with(".tmp") {
                continue;
            }
            let relative = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.insert(relative, fs::read(&path).unwrap());
        }
    }
    out
}

/// Each file is whole: its original or its v5 form. Returns how many are migrated.
fn assert_whole(root: &Path, tree: &Tree, context: &str) -> usize {
    let disk = files_on_disk(root);
    assert_eq!(disk.keys().collect::<Vec<_>>(), tree.keys().collect::<Vec<_>>(), "{context}: the set of files");
    let mut migrated = 0;
    for (name, (original, v5)) in tree {
        let bytes = &disk[name];
        if bytes == v5 {
            if original != v5 {
                migrated += 1;
            }
        } else {
            assert_eq!(bytes, original, "{context}: {name} is neither its original nor its v5 form");
        }
    }
    migrated
}

fn migrate(args: &[&str], root: &Path) -> (i32, Vec<Value>, Value) {
    let output = run_paths(&[&["migrate", "--json"][..], args].concat(), &[root]);
    let code = status(&output);
    let (records, summary) = json_lines(&output);
    (code, records, summary)
}

#[test]
fn a_dry_run_reports_everything_and_writes_nothing() {
    let scratch = Scratch::new("migrate-dry");
    let root = scratch.path().join("tree");
    let tree = build_tree(4, 3000);
    write_tree(&root, &tree);
    let (code, records, summary) = migrate(&[], &root);
    assert_eq!(code, 1, "a damaged legacy frame and an invalid JSON line cannot be migrated");
    assert_eq!(assert_whole(&root, &tree, "dry run"), 0);
    let action = |name: &str| {
        let record = records.iter().find(|r| r["path"].as_str().unwrap().ends_with(name)).unwrap();
        record["action"].as_str().unwrap().to_string()
    };
    assert_eq!(action("vectors/v2-0.blob"), "rewrite");
    assert_eq!(action("kv/shard-00.frame"), "rewrite", "found by its magic");
    assert_eq!(action("kv/current.frame"), "unchanged");
    assert_eq!(action("kv/damaged.blob"), "left_alone");
    assert_eq!(action("kv/README.txt"), "skipped");
    assert_eq!(action("env/message-0.json"), "rewrite");
    assert_eq!(action("env/outbox.jsonl"), "rewrite");
    let damaged = records.iter().find(|r| r["path"].as_str().unwrap().ends_with("damaged.blob")).unwrap();
    assert_eq!(damaged["code"], "trailer_mismatch");
    assert_eq!(summary["write"], false);
    assert_eq!(summary["would_rewrite"], 12 + 4 + 3 + 1);
    assert_eq!(summary["left_alone"], 1);
    assert_eq!(summary["skipped"], 1);
    assert_eq!(summary["kept_invalid_lines"], 1);

    // The human report says what would change and how to apply it.
    let output = run_paths(&["migrate"], &[&root]);
    let text = stdout(&output);
    assert!(text.contains("would rewrite") && text.contains("--write"), "{text}");
    assert!(text.contains("left alone") && text.contains("trailer_mismatch"), "{text}");
    assert!(text.contains("line ") && text.contains("kept as it is"), "{text}");
}

#[test]
fn write_produces_the_exact_v5_forms_and_a_second_run_changes_nothing() {
    let scratch = Scratch::new("migrate-write");
    let root = scratch.path().join("tree");
    let tree = build_tree(4, 3000);
    write_tree(&root, &tree);
    let (code, _, summary) = migrate(&["--write"], &root);
    assert_eq!(code, 1);
    assert_eq!(summary["rewritten"], 20);
    let changed = tree.values().filter(|(a, b)| a != b).count();
    assert_eq!(assert_whole(&root, &tree, "after --write"), changed);
    assert_eq!(files_on_disk(&root).len(), tree.len(), "no temporary file left");

    let stamps = |root: &Path| -> Vec<(PathBuf, SystemTime)> {
        files_on_disk(root)
            .keys()
            .map(|k| (root.join(k), fs::metadata(root.join(k)).unwrap().modified().unwrap()))
            .collect()
    };
    let before = stamps(&root);
    let (code, records, summary) = migrate(&["--write"], &root);
    assert_eq!(code, 1);
    assert_eq!(summary["rewritten"], 0);
    assert!(records.iter().all(|r| r["action"] != "rewritten"));
    assert_eq!(stamps(&root), before, "nothing was touched");
    assert_eq!(assert_whole(&root, &tree, "second run"), changed);
}

#[test]
fn a_clean_tree_exits_zero_and_permissions_survive() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new("migrate-clean");
    let v5 = frame(&bytes(5000, 1));
    let path = scratch.write("a.blob", &legacy(&v5, 4));
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    // A dry run that would rewrite something fails, so it can gate a job; nothing changes.
    let (code, _, summary) = migrate(&[], scratch.path());
    assert_eq!((code, summary["would_rewrite"].as_u64()), (1, Some(1)));
    assert_eq!(fs::read(&path).unwrap(), legacy(&v5, 4));
    let (code, _, summary) = migrate(&["--write"], scratch.path());
    assert_eq!((code, summary["rewritten"].as_u64()), (0, Some(1)));
    assert_eq!(fs::read(&path).unwrap(), v5);
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
    let (code, _, summary) = migrate(&["--write"], scratch.path());
    assert_eq!((code, summary["unchanged"].as_u64()), (0, Some(1)));
    // Once everything is v5, the dry run passes.
    let (code, _, summary) = migrate(&[], scratch.path());
    assert_eq!((code, summary["would_rewrite"].as_u64()), (0, Some(0)));
}

#[test]
fn killed_at_random_moments_every_file_stays_whole() {
    let scratch = Scratch::new("migrate-kill");
    let root = scratch.path().join("tree");
    let tree = build_tree(14, 600_000);
    let changed = tree.values().filter(|(a, b)| a != b).count();

    // How long an uninterrupted run takes here.
    write_tree(&root, &tree);
    let start = Instant::now();
    let (_, _, summary) = migrate(&["--write"], &root);
    let full = start.elapsed();
    assert_eq!(summary["rewritten"].as_u64().unwrap() as usize, changed);
    assert_eq!(assert_whole(&root, &tree, "uninterrupted"), changed);

    let mut seed = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("seed {seed}, an uninterrupted run takes {full:?}");
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut partial = 0;
    let mut progress = Vec::new();
    for round in 0..24 {
        // Start from the originals every other round; otherwise carry on from where
        // the last killed run left the tree.
        if round % 2 == 0 {
            write_tree(&root, &tree);
        }
        let mut child = Command::new(BIN)
            .args(["migrate", "--write"])
            .arg(&root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let delay = full.mul_f64((random() % 1000) as f64 / 1000.0 * 1.2);
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let migrated = assert_whole(&root, &tree, &format!("round {round}, killed after {delay:?}"));
        progress.push(migrated);
        if migrated > 0 && migrated < changed {
            partial += 1;
        }
    }
    eprintln!("files migrated when killed, per round: {progress:?}");
    assert!(partial > 0, "no run was interrupted midway: {progress:?}");

    // Finishing after the crashes gives the complete result, and then nothing changes.
    let (_, _, summary) = migrate(&["--write"], &root);
    assert_eq!(summary["io_errors"], 0);
    assert_eq!(assert_whole(&root, &tree, "finished"), changed);
    let (_, records, summary) = migrate(&["--write"], &root);
    assert_eq!(summary["rewritten"], 0);
    assert!(records.iter().all(|r| r["action"] != "rewritten"));
    assert_eq!(assert_whole(&root, &tree, "second run"), changed);
}

#[test]
fn envelope_check_reads_json_and_json_lines() {
    let scratch = Scratch::new("envelope-check");
    let vectors = migration_vectors();
    let v5 = vectors[0]["expected_v5"].as_str().unwrap();
    let old = vectors[0]["input"].as_str().unwrap();
    let one = scratch.write("one.json", format!("{v5}\n").as_bytes());
    let many = scratch.write("many.jsonl", format!("{v5}\n\n{old}\n{{\"schema_version\": 5,}}\n{v5}").as_bytes());
    let output = run_paths(&["envelope", "check", "--json"], &[&one, &many]);
    assert_eq!(status(&output), 1);
    let (records, summary) = json_lines(&output);
    let codes: Vec<(Option<u64>, &str)> =
        records.iter().map(|r| (r["line"].as_u64(), r["code"].as_str().unwrap())).collect();
    assert_eq!(
        codes,
        [(None, "ok"), (Some(1), "ok"), (Some(3), "envelope_version"), (Some(4), "envelope_json"), (Some(5), "ok")]
    );
    assert_eq!(records[0]["canonical"], true);
    assert_eq!(summary["envelopes"], 5);
    assert_eq!(summary["blank_lines"], 1);
    let output = run_paths(&["envelope", "check"], &[&many]);
    assert!(stdout(&output).contains("many.jsonl:3: envelope_version"), "{}", stdout(&output));
    let output = run_paths(&["envelope", "check"], &[&one]);
    assert_eq!(status(&output), 0);
    assert!(stdout(&output).contains("checked 1 envelope: 1 valid"), "{}", stdout(&output));
    assert_eq!(status(&run_paths(&["envelope", "check"], &[&scratch.path().join("absent.json")])), 2);
}

#[test]
fn a_read_only_directory_is_named_as_the_problem_and_the_file_is_kept() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new("migrate-readonly");
    let old = legacy(&frame(&bytes(1000, 7)), 4);
    let file = scratch.write("ro/old.blob", &old);
    let dir = file.parent().unwrap().to_path_buf();
    fs::set_permissions(scratch.path(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let mut command = Command::new(BIN);
    if fs::File::create(dir.join(".probe")).is_ok() {
        // Root ignores permissions: run the binary as `nobody` so they apply.
        let _ = fs::remove_file(dir.join(".probe"));
        assert!(Path::new("/usr/bin/setpriv").exists(), "running as root needs setpriv (util-linux) for this test");
        command = Command::new("/usr/bin/setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
    }
    let output = command.args(["migrate", "--write"]).arg(scratch.path()).output().unwrap();
    assert_eq!(status(&output), 2, "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains(&format!("cannot write a new file in the directory {}: Permission denied", dir.display())),
        "{message}"
    );
    assert_eq!(fs::read(&file).unwrap(), old, "the original is untouched");
}

/// Small legacy frames that fit beside themselves and big ones that will not, for the
/// tests of writes that fail for lack of room.
fn small_and_big_frames(big_len: usize) -> Tree {
    let mut tree = Tree::new();
    for (i, len) in [2000, 2100, 2200, big_len, big_len + 100, big_len + 200, big_len + 300].into_iter().enumerate() {
        let v5 = frame(&bytes(len, 40 + i as u64));
        tree.insert(format!("f{i}.blob"), (legacy(&v5, if i % 2 == 0 { 4 } else { 2 }), v5));
    }
    tree
}

/// After a run whose writes failed: exit status 2, every big file reported with `why`
/// and kept as it was, every small one migrated, no temporary file left.
fn assert_failed_writes_kept_originals(root: &Path, tree: &Tree, code: i32, stdout: &str, why: &str, big_len: usize) {
    assert_eq!(code, 2, "failed writes are I/O errors: {stdout}");
    let leftovers: Vec<_> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    assert_whole(root, tree, why);
    let records: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (name, (original, v5)) in tree {
        let record = records.iter().find(|r| r["path"].as_str().is_some_and(|p| p.ends_with(name.as_str()))).unwrap();
        let on_disk = fs::read(root.join(name)).unwrap();
        if original.len() >= big_len {
            assert_eq!(record["action"], "io_error", "{name}: {record}");
            assert!(record["reason"].as_str().unwrap().contains(why), "{name}: {record}");
            assert_eq!(&on_disk, original, "{name}: the original is intact");
        } else {
            assert_eq!(record["action"], "rewritten", "{name}: {record}");
            assert_eq!(&on_disk, v5, "{name}: migrated");
        }
    }
}

/// `--write` on a full disk: a 1 MiB tmpfs, mounted in a private user and mount
/// namespace (`unshare`), holding frames too big to be copied beside themselves. Their
/// writes fail with ENOSPC and are reported; the originals stay whole.
#[test]
fn on_a_full_disk_the_failed_rewrites_leave_the_originals_whole() {
    const BIG: usize = 240 << 10;
    let scratch = Scratch::new("migrate-full-disk");
    let tree = small_and_big_frames(BIG);
    let source = scratch.path().join("source");
    write_tree(&source, &tree);
    let (disk, out) = (scratch.path().join("disk"), scratch.path().join("out"));
    fs::create_dir_all(&disk).unwrap();
    fs::create_dir_all(&out).unwrap();
    let script = r#"set -e
mount -t tmpfs -o size=1m tmpfs "$1"
cp -a "$2"/. "$1"/
set +e
"$3" migrate --write --json "$1" > "$4/stdout" 2> "$4/stderr"
echo $? > "$4/status"
set -e
cp -a "$1" "$4/after"
"#;
    let output = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script, "sh"])
        .args([&disk, &source, Path::new(BIN), &out])
        .output()
        .expect("unshare (util-linux) runs");
    assert!(
        output.status.success(),
        "could not make a 1 MiB tmpfs in a private mount namespace (this test needs `unshare --user --map-root-user --mount` to work): {}",
        stderr(&output)
    );
    let code: i32 = fs::read_to_string(out.join("status")).unwrap().trim().parse().unwrap();
    let stdout = fs::read_to_string(out.join("stdout")).unwrap();
    assert_failed_writes_kept_originals(&out.join("after"), &tree, code, &stdout, "No space left on device", BIG);
    assert!(fs::read_to_string(out.join("stderr")).unwrap().contains("No space left on device"));
}

/// The same with the failure injected another way, open to any process: a file-size
/// limit (`ulimit -f`, SIGXFSZ ignored), so a write past 100 KiB fails with EFBIG.
#[test]
fn a_failed_write_leaves_the_original_whole() {
    const BIG: usize = 240 << 10;
    let scratch = Scratch::new("migrate-write-error");
    let tree = small_and_big_frames(BIG);
    write_tree(scratch.path(), &tree);
    let output = Command::new("sh")
        .args(["-c", r#"ulimit -f 200 && trap "" XFSZ && exec "$0" "$@""#])
        .arg(BIN)
        .args(["migrate", "--write", "--json"])
        .arg(scratch.path())
        .output()
        .unwrap();
    assert_failed_writes_kept_originals(
        scratch.path(),
        &tree,
        status(&output),
        &stdout(&output),
        "File too large",
        BIG,
    );
}
