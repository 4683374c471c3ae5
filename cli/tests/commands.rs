//! `inspect`, `pack`, `unpack`, `fingerprint` and `demo`, driven through the binary.

mod common;

use common::*;
use membrane_frame::{Frame, ReadOptions, VerifyLevel};
use serde_json::Value;
use std::fs;
use std::path::Path;

const IDENTITY: &str = r#"{ "payload_hash": "to be replaced", "model_id": "llama-3-8b", "model_revision": "main",
  "tokenizer_name": "llama-3-8b", "tokenizer_revision": "", "layer_range": [0, 1],
  "head_range": [-1, -1], "token_span": [0, 15], "dtype": "bfloat16", "shape": [2, 2, 8, 16, 128] }"#;

fn inspect_json(path: &Path) -> (i32, Value) {
    let output = run_paths(&["inspect", "--json"], &[path]);
    let code = status(&output);
    let value: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    (code, value)
}

#[test]
fn inspect_reports_every_field_of_a_valid_frame() {
    let scratch = Scratch::new("inspect");
    let payload = bytes(5000, 1);
    let bytes_ = frame(&payload);
    let path = scratch.write("good.frame", &bytes_);
    let (code, report) = inspect_json(&path);
    assert_eq!(code, 0);
    let (parsed, _) = Frame::parse_with(&bytes_, &ReadOptions::new().level(VerifyLevel::Full)).unwrap();
    let identity = parsed.identity().unwrap();
    assert_eq!(report["code"], "ok");
    assert_eq!(report["class"], "ok");
    assert_eq!(report["fingerprint"], identity.fingerprint().to_hex().as_str());
    assert_eq!(report["payload_len"], 5000);
    assert_eq!(report["canonical"], true);
    assert_eq!(report["trailer_ok"], true);
    assert_eq!(report["payload_hash_ok"], true);
    assert_eq!(report["magic"], "c0de0105");
    assert_eq!(report["schema"], 5);
    assert_eq!(report["identity"]["dtype"], "float16");
    assert_eq!(report["identity"]["shape"], serde_json::json!([2, 4, 8, 128, 128]));

    let human = stdout(&run_paths(&["inspect"], &[&path]));
    for needle in [
        "verdict",
        "ok (valid at the full level)",
        "fingerprint",
        "canonical",
        "matches the payload",
        "[-1, -1] (all heads)",
    ] {
        assert!(human.contains(needle), "{needle} missing from:\n{human}");
    }
}

#[test]
fn inspect_explains_damaged_and_legacy_frames() {
    let scratch = Scratch::new("inspect-bad");
    let good = frame(&bytes(5000, 2));
    let mut flipped = good.clone();
    flipped[2000] ^= 1;
    let (code, report) = inspect_json(&scratch.write("flipped.frame", &flipped));
    assert_eq!(code, 1);
    assert_eq!(report["code"], "trailer_mismatch");
    assert_eq!(report["class"], "corrupt");
    assert_eq!(report["offset"].as_u64().unwrap() as usize, flipped.len() - 8);
    assert_eq!(report["trailer_ok"], false);
    assert_eq!(report["payload_hash_ok"], false);

    let (code, report) = inspect_json(&scratch.write("old.blob", &legacy(&good, 2)));
    assert_eq!(code, 1);
    assert_eq!(report["code"], "legacy_frame");
    assert_eq!(report["format"], "legacy v2");
    assert_eq!(report["trailer_ok"], true, "the rest of a legacy frame is still checked");

    let (code, report) = inspect_json(&scratch.write("empty", b""));
    assert_eq!((code, report["code"].as_str()), (1, Some("too_short")));

    let output = run_paths(&["inspect"], &[&scratch.path().join("absent")]);
    assert_eq!(status(&output), 2);
    assert!(stderr(&output).contains("absent: cannot read"));
}

#[test]
fn pack_then_unpack_round_trips_and_verifies_at_the_full_level() {
    let scratch = Scratch::new("pack");
    let payload = bytes(3_000_000, 3);
    let raw = scratch.write("kv.bin", &payload);
    let id = scratch.write("id.json", IDENTITY.as_bytes());
    let out = scratch.path().join("packed.frame");

    // A payload_hash that is not the payload's digest: nothing written, exit 1 ...
    let output = run_paths(&["pack", "--identity"], &[&id, Path::new("--payload"), &raw, Path::new("-o"), &out]);
    assert_eq!(status(&output), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains("nothing written") && stderr(&output).contains("--allow-hash-mismatch"));
    assert!(!out.exists());
    // ... unless asked: then it is kept (with a warning).
    let output = run_paths(
        &["pack", "--allow-hash-mismatch", "--identity"],
        &[&id, Path::new("--payload"), &raw, Path::new("-o"), &out],
    );
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert!(stderr(&output).contains("warning: payload_hash"), "{}", stderr(&output));
    let written = fs::read(&out).unwrap();
    assert!(Frame::parse_with(&written, &ReadOptions::new()).is_ok());
    assert!(Frame::parse_with(&written, &ReadOptions::new().level(VerifyLevel::Full)).is_err());

    // An existing OUT is left alone without --force.
    let output = run_paths(
        &["pack", "--fill-payload-hash", "--identity"],
        &[&id, Path::new("--payload"), &raw, Path::new("--output"), &out],
    );
    assert_eq!(status(&output), 2, "{}", stderr(&output));
    assert!(stderr(&output).contains("exists") && stderr(&output).contains("--force"));
    assert_eq!(fs::read(&out).unwrap(), written);
    let output = run_paths(
        &["pack", "--fill-payload-hash", "--force", "--identity"],
        &[&id, Path::new("--payload"), &raw, Path::new("--output"), &out],
    );
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let written = fs::read(&out).unwrap();
    let (parsed, _) = Frame::parse_with(&written, &ReadOptions::new().level(VerifyLevel::Full)).unwrap();
    assert_eq!(parsed.payload(), &payload[..]);
    assert!(parsed.identity().unwrap().is_canonical());
    assert!(stdout(&output).contains(&parsed.identity().unwrap().fingerprint().to_hex().to_string()));

    let back = scratch.path().join("back.bin");
    let output = run_paths(&["unpack"], &[&out, Path::new("--payload-out"), &back]);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert_eq!(fs::read(&back).unwrap(), payload);

    // To standard output.
    let output = run_paths(&["unpack", "--level", "full"], &[&out, Path::new("--payload-out"), Path::new("-")]);
    assert_eq!(status(&output), 0);
    assert_eq!(output.stdout, payload);

    // No temporary files are left behind.
    let leftovers: Vec<_> = fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn pack_fills_a_missing_payload_hash_and_refuses_bad_identities() {
    let scratch = Scratch::new("pack-fill");
    let raw = scratch.write("kv.bin", &bytes(1000, 4));
    let without: String = IDENTITY.replace(r#""payload_hash": "to be replaced", "#, "");
    let id = scratch.write("id.json", without.as_bytes());
    let out = scratch.path().join("out.frame");
    let output = run_paths(&["pack", "--identity"], &[&id, Path::new("--payload"), &raw, Path::new("-o"), &out]);
    assert_eq!(status(&output), 1);
    assert!(stderr(&output).contains("--fill-payload-hash"), "{}", stderr(&output));
    assert!(!out.exists());
    let output = run_paths(
        &["pack", "--fill-payload-hash", "--identity"],
        &[&id, Path::new("--payload"), &raw, Path::new("-o"), &out],
    );
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert!(Frame::parse_with(&fs::read(&out).unwrap(), &ReadOptions::new().level(VerifyLevel::Full)).is_ok());
    fs::remove_file(&out).unwrap();

    for (bad, code) in [
        (IDENTITY.replace("bfloat16", "bfloat17"), "identity_field"),
        (IDENTITY.replace("\"dtype\"", "\"dtype\": 1, \"dtype\""), "identity_json"),
        (String::from("[1, 2]"), "identity_json"),
    ] {
        let id = scratch.write("bad.json", bad.as_bytes());
        let output = run_paths(
            &["pack", "--fill-payload-hash", "--identity"],
            &[&id, Path::new("--payload"), &raw, Path::new("-o"), &out],
        );
        assert_eq!(status(&output), 1, "{bad}");
        assert!(stderr(&output).contains(code), "{code}: {}", stderr(&output));
    }
    let output = run_paths(
        &["pack", "--identity"],
        &[&id, Path::new("--payload"), Path::new("/nonexistent/raw"), Path::new("-o"), &out],
    );
    assert_eq!(status(&output), 2);
}

#[test]
fn unpack_writes_nothing_for_a_damaged_frame() {
    let scratch = Scratch::new("unpack-bad");
    let mut damaged = frame(&bytes(200_000, 5));
    let at = damaged.len() - 50;
    damaged[at] ^= 1;
    let path = scratch.write("damaged.frame", &damaged);
    let out = scratch.path().join("payload.bin");
    let output = run_paths(&["unpack"], &[&path, Path::new("--payload-out"), &out]);
    assert_eq!(status(&output), 1);
    assert!(stderr(&output).contains("trailer_mismatch at byte"), "{}", stderr(&output));
    assert!(!out.exists());
    assert_eq!(fs::read_dir(scratch.path()).unwrap().count(), 1, "no temporary file left");
    let output = run_paths(&["unpack"], &[&path, Path::new("--payload-out"), Path::new("-")]);
    assert_eq!(status(&output), 1);
    assert!(output.stdout.is_empty());
}

#[test]
fn fingerprints_match_the_identity_vectors() {
    let vectors = vectors_dir();
    let scratch = Scratch::new("fingerprint");
    let text = fs::read_to_string(vectors.join("identities.jsonl")).unwrap();
    for line in text.lines().take(40) {
        let vector: Value = serde_json::from_str(line).unwrap();
        let Some(expected) = vector["fingerprint"].as_str() else { continue };
        let id = scratch.write("id.json", vector["identity"].to_string().as_bytes());
        let output = run_paths(&["fingerprint"], &[&id]);
        assert_eq!(status(&output), 0, "{line}\n{}", stderr(&output));
        assert_eq!(stdout(&output).trim(), expected, "{}", vector["name"]);
    }
    // A frame's identity, and the documented vector frame.
    let docs = vectors.join("frames/docs-hello.bin");
    let output = run_paths(&["fingerprint", "--json"], &[&docs]);
    assert_eq!(status(&output), 0);
    let report: Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let bytes_ = fs::read(&docs).unwrap();
    let frame = Frame::parse(&bytes_).unwrap();
    assert_eq!(report["fingerprint"], frame.identity().unwrap().fingerprint().to_hex().as_str());
    // Bad input: the file and the offset are named.
    let id = scratch.write("bad.json", br#"{"dtype": "float16", "dtype": "int8"}"#);
    let output = run_paths(&["fingerprint"], &[&id]);
    assert_eq!(status(&output), 1);
    assert!(stderr(&output).contains("bad.json: identity_json at byte"), "{}", stderr(&output));
}

#[test]
fn demo_generates_and_verifies_a_sample_corpus() {
    let scratch = Scratch::new("demo");
    let out = scratch.path().join("corpus");
    let output = run_paths(&["demo", "--out"], &[&out]);
    assert_eq!(status(&output), 0, "{}\n{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("every verdict is the one the generator intended"), "{text}");
    for code in ["trailer_mismatch", "legacy_frame", "too_short", "bad_magic", "payload_hash_mismatch"] {
        assert!(text.contains(code), "{code} missing:\n{text}");
    }
    // The corpus stays and verifies with the same verdicts from `verify`.
    let verify = run_paths(&["verify", "--json", "--level", "full"], &[&out]);
    assert_eq!(status(&verify), 1);
    let (_, summary) = json_lines(&verify);
    assert_eq!(summary["files"], 19);
    assert_eq!(summary["ok"], 7);

    // Without --out it cleans up after itself.
    let output = run(&["demo"]);
    assert_eq!(status(&output), 0);
    let removed = stdout(&output).lines().find(|l| l.starts_with("removed ")).unwrap().to_string();
    let dir = removed.trim_start_matches("removed ").split(" (").next().unwrap();
    assert!(!Path::new(dir).exists());

    // Bulk mode.
    let bulk = scratch.path().join("bulk");
    let output = run_paths(&["demo", "--frames", "12", "--frame-size", "100KiB", "--out"], &[&bulk]);
    assert_eq!(status(&output), 1, "one in ten bulk frames is damaged");
    let output = run_paths(&["verify", "--json"], &[&bulk]);
    let (records, _) = json_lines(&output);
    assert_eq!(records.len(), 12);
    assert_eq!(records.iter().filter(|r| r["code"] == "trailer_mismatch").count(), 1);
    assert!(records.iter().all(|r| r["code"] == "ok" || r["code"] == "trailer_mismatch"));

    // A directory with files of the user's in it is refused, and left as it was.
    let output = run_paths(&["demo", "--out"], &[&bulk]);
    assert_eq!(status(&output), 2);
    assert!(stderr(&output).contains("is not empty"), "{}", stderr(&output));
    let (again, _) = json_lines(&run_paths(&["verify", "--json"], &[&bulk]));
    assert_eq!(again.len(), 12);
}

#[test]
fn completions_and_the_manual_page_cover_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let output = run(&["completions", shell]);
        assert_eq!(status(&output), 0, "{shell}: {}", stderr(&output));
        let script = stdout(&output);
        for command in ["verify", "inspect", "pack", "migrate", "envelope", "demo"] {
            assert!(script.contains(command), "{shell} completion lacks {command}");
        }
    }
    assert_eq!(status(&run(&["completions", "tcsh"])), 2, "an unknown shell is a usage error");
    let output = run(&["man"]);
    assert_eq!(status(&output), 0);
    let page = stdout(&output);
    assert!(page.contains(".TH membrane-frame 1"), "{page}");
    assert!(page.contains("migrate") && page.contains("envelope"), "the page names every command");
    // The one-line description names every command too.
    let help = stdout(&run(&["--help"]));
    assert!(help.lines().next().is_some_and(|line| line.contains("migrate") && line.contains("envelope check")));
}

#[test]
fn standard_input_works_wherever_a_file_is_read() {
    let scratch = Scratch::new("stdin");
    let payload = bytes(200_000, 8);
    let framed = frame(&payload);
    let (parsed, _) = Frame::parse_with(&framed, &ReadOptions::new()).unwrap();
    let fingerprint = parsed.identity().unwrap().fingerprint().to_hex().to_string();

    // inspect -
    let output = run_with_stdin(&["inspect", "--json", "-"], &framed);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["path"], "-");
    assert_eq!(report["fingerprint"], fingerprint.as_str());
    let mut damaged = framed.clone();
    damaged[framed.len() / 2] ^= 1;
    let output = run_with_stdin(&["inspect", "-"], &damaged);
    assert_eq!(status(&output), 1);
    assert!(stdout(&output).contains("trailer_mismatch"), "{}", stdout(&output));

    // fingerprint - of a frame (only its head is read) and of an identity.
    let output = run_with_stdin(&["fingerprint", "-"], &framed);
    assert_eq!((status(&output), stdout(&output).trim()), (0, fingerprint.as_str()), "{}", stderr(&output));
    let output = run_with_stdin(&["fingerprint", "-"], IDENTITY.as_bytes());
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output).trim().len(), 64);

    // envelope check -: one envelope, or JSON lines with --format jsonl.
    let vectors = fs::read_to_string(vectors_dir().join("envelopes.jsonl")).unwrap();
    let accepted: Vec<String> = vectors
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|case| case["expect"] == "ok")
        .map(|case| case["json"].as_str().unwrap().to_string())
        .take(2)
        .collect();
    assert_eq!(accepted.len(), 2, "two accepted envelope vectors");
    let output = run_with_stdin(&["envelope", "check", "--json", "-"], accepted[0].as_bytes());
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let lines = format!("{}\n{}\n{{\"schema_version\": 5}}\n", accepted[0], accepted[1]);
    let output = run_with_stdin(&["envelope", "check", "--format", "jsonl", "--json", "-"], lines.as_bytes());
    assert_eq!(status(&output), 1);
    let records: Vec<Value> = stdout(&output).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.iter().filter(|r| r["code"] == "ok").count(), 2, "{records:?}");
    assert!(records.iter().any(|r| r["line"] == 3 && r["code"] != "ok"), "{records:?}");

    // pack --payload -
    let id = scratch.write("id.json", IDENTITY.as_bytes());
    let out = scratch.path().join("from-stdin.frame");
    let args = [
        "pack",
        "--fill-payload-hash",
        "--identity",
        id.to_str().unwrap(),
        "--payload",
        "-",
        "-o",
        out.to_str().unwrap(),
    ];
    let output = run_with_stdin(&args, &payload);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let written = fs::read(&out).unwrap();
    let (packed, _) = Frame::parse_with(&written, &ReadOptions::new().level(VerifyLevel::Full)).unwrap();
    assert_eq!(packed.payload(), &payload[..]);
    let leftovers: Vec<_> = fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "the copy of standard input is removed: {leftovers:?}");
    let output = run_with_stdin(&["pack", "--identity", "-", "--payload", "-", "-o", "x.frame"], b"");
    assert_eq!(status(&output), 2);
    assert!(stderr(&output).contains("cannot both be standard input"), "{}", stderr(&output));
}

/// Aligned frames (SPEC §1.5, `aligned.jsonl`): `inspect` and `verify --json` report
/// the padding and the payload offset the original reader recorded, and `pack --align`
/// writes a vector's exact bytes from its identity and payload.
#[test]
fn aligned_vectors_are_inspected_verified_and_packed_byte_for_byte() {
    let scratch = Scratch::new("aligned");
    let vectors = vectors_dir();
    let cases: Vec<Value> = fs::read_to_string(vectors.join("aligned.jsonl"))
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut packed = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let path = vectors.join(case["file"].as_str().unwrap());
        let offset = case["payload_offset"].as_u64().unwrap();
        let (code, report) = inspect_json(&path);
        assert_eq!((code, &report["code"]), (0, &Value::from("ok")), "{name}");
        assert_eq!(report["payload_offset"], offset, "{name}");
        assert_eq!(report["payload_alignment"], 1u64 << offset.trailing_zeros(), "{name}");
        assert_eq!(report["padding"], case["padding"], "{name}");
        assert_eq!(report["canonical"], case["canonical"], "{name}");
        let human = stdout(&run_paths(&["inspect"], &[&path]));
        let line = format!("{offset} (aligned to {} bytes)", 1u64 << offset.trailing_zeros());
        assert!(human.contains(&line), "{name}: {line} missing from:\n{human}");
        if case["padding"].as_u64().unwrap() > 0 {
            let padded = format!("canonical, {} bytes of padding", case["padding"]);
            assert!(human.contains(&padded), "{name}: {padded} missing from:\n{human}");
        }
        let (records, _) = json_lines(&run_paths(&["verify", "--json", "--level", "full"], &[&path]));
        assert_eq!((records[0]["payload_offset"].as_u64(), &records[0]["padding"]), (Some(offset), &case["padding"]));

        // pack places frames at the start of their file: the vectors written at base 0.
        let (Some(align), Some(0)) = (case["align"].as_u64(), case["base"].as_u64()) else { continue };
        let bytes = fs::read(&path).unwrap();
        let frame = Frame::parse(&bytes).unwrap();
        let identity_json = &frame.identity_json()[..frame.identity_json().len() - frame.padding()];
        let id = scratch.write(&format!("{name}.json"), identity_json);
        let raw = scratch.write(&format!("{name}.raw"), frame.payload());
        let out = scratch.path().join(format!("{name}.frame"));
        let args = ["pack", "--align", &align.to_string(), "--identity"];
        let output = run_paths(&args, &[&id, Path::new("--payload"), &raw, Path::new("-o"), &out]);
        assert_eq!(status(&output), 0, "{name}: {}", stderr(&output));
        assert_eq!(fs::read(&out).unwrap(), bytes, "{name}: pack --align {align}");
        assert!(stdout(&output).contains(&format!("at offset {offset}")), "{}", stdout(&output));
        packed += 1;
    }
    assert!(packed >= 3, "only {packed} aligned vectors packed");
    // Alignments that are not powers of two up to a page are usage errors, before any write.
    let id = scratch.write("id.json", IDENTITY.as_bytes());
    let raw = scratch.write("raw", b"x");
    for bad in ["3", "8192", "0", "x"] {
        let out = scratch.path().join(format!("bad-{bad}.frame"));
        let output = run_paths(
            &["pack", "--fill-payload-hash", "--align", bad, "--identity"],
            &[&id, Path::new("--payload"), &raw, Path::new("-o"), &out],
        );
        assert_eq!(status(&output), 2, "--align {bad}");
        assert!(stderr(&output).contains("--align"), "{}", stderr(&output));
        assert!(!out.exists());
    }
}
