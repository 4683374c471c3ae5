//! The main job until the command-line tool lands: write a sample corpus of synthetic
//! KV-cache frames (several dtypes and shapes, some deliberately damaged) into a
//! temporary directory, then verify every file at every level and print what each
//! level says.
//!
//! Run: `cargo run --release --example sample_corpus [DIR]`

use membrane_frame::{
    encode_frame, Dtype, Frame, IdentityValues, InclusiveRange, ReadOptions, Sha256Digest, VerifyLevel,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A realistic fragment: one layer block of a model's KV cache.
struct Fragment {
    name: &'static str,
    model: &'static str,
    dtype: Dtype,
    layers: (i64, i64),
    heads: i64,
    tokens: i64,
    head_dim: i64,
}

const FRAGMENTS: &[Fragment] = &[
    Fragment {
        name: "llama-f16",
        model: "llama-3-8b",
        dtype: Dtype::Float16,
        layers: (0, 3),
        heads: 8,
        tokens: 128,
        head_dim: 128,
    },
    Fragment {
        name: "llama-bf16",
        model: "llama-3-8b",
        dtype: Dtype::Bfloat16,
        layers: (4, 7),
        heads: 8,
        tokens: 256,
        head_dim: 128,
    },
    Fragment {
        name: "mistral-fp8",
        model: "mistral-7b",
        dtype: Dtype::Fp8E4m3,
        layers: (0, 31),
        heads: 8,
        tokens: 64,
        head_dim: 128,
    },
    Fragment {
        name: "qwen-f32",
        model: "qwen2-1.5b",
        dtype: Dtype::Float32,
        layers: (0, 1),
        heads: 2,
        tokens: 512,
        head_dim: 64,
    },
    Fragment {
        name: "tiny-int8",
        model: "tinyllama-1.1b",
        dtype: Dtype::Int8,
        layers: (10, 10),
        heads: 4,
        tokens: 32,
        head_dim: 64,
    },
    Fragment {
        name: "phi-nf4",
        model: "phi-3-mini",
        dtype: Dtype::Nf4,
        layers: (0, 7),
        heads: 32,
        tokens: 96,
        head_dim: 96,
    },
];

/// Deterministic pseudo-random payload bytes (xorshift), so runs are reproducible.
fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

fn write_frame(fragment: &Fragment, seed: u64) -> Result<Vec<u8>, membrane_frame::Error> {
    let layers = fragment.layers.1 - fragment.layers.0 + 1;
    let shape = [2, layers, fragment.heads, fragment.tokens, fragment.head_dim];
    // Size the payload from the tensor shape, capped to keep the corpus small.
    let elements: i64 = shape.iter().product();
    let bytes = ((elements as u64 * u64::from(fragment.dtype.bits())).div_ceil(8)).min(4 << 20) as usize;
    let data = payload(bytes, seed);
    let hash = Sha256Digest::of(&data).to_hex();
    let identity = IdentityValues {
        payload_hash: hash.as_str(),
        model_id: fragment.model,
        model_revision: "",
        tokenizer_name: fragment.model,
        tokenizer_revision: "",
        layer_range: InclusiveRange::new(fragment.layers.0, fragment.layers.1),
        head_range: InclusiveRange::ALL_HEADS,
        token_span: InclusiveRange::new(0, fragment.tokens - 1),
        dtype: fragment.dtype,
        shape: &shape,
    }
    .build()?;
    let mut out = vec![0u8; data.len() + 4096];
    let len = encode_frame(&identity, &data, &mut out)?;
    out.truncate(len);
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = match std::env::args_os().nth(1) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::temp_dir().join(format!("membrane-sample-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir)?;
    let mut files = Vec::new();
    for (i, fragment) in FRAGMENTS.iter().enumerate() {
        let frame = write_frame(fragment, i as u64 + 1)?;
        let identity_end = 14 + u32::from_le_bytes(frame[10..14].try_into()?) as usize;
        let mut variants = vec![(format!("{}.frame", fragment.name), frame.clone())];
        // Damaged copies: a flipped payload bit, a cut trailer, a v4 magic, extra bytes.
        let mut flipped = frame.clone();
        flipped[identity_end + 8 + 3] ^= 0x10;
        variants.push((format!("{}.payload-flip.frame", fragment.name), flipped));
        if i % 2 == 0 {
            variants.push((format!("{}.truncated.frame", fragment.name), frame[..frame.len() - 3].to_vec()));
            let mut legacy = frame.clone();
            legacy[3] = 0x04;
            variants.push((format!("{}.legacy-v4.frame", fragment.name), legacy));
        } else {
            let mut trailing = frame.clone();
            trailing.extend_from_slice(b"junk");
            variants.push((format!("{}.trailing.frame", fragment.name), trailing));
        }
        for (name, bytes) in variants {
            let path = dir.join(name);
            std::fs::write(&path, &bytes)?;
            files.push(path);
        }
    }
    println!("wrote {} files to {}", files.len(), dir.display());
    println!("{:<34} {:>9}  {:<18} {:<18} {:<18} {:<18}", "file", "bytes", "layout", "identity", "trailer", "full");
    let mut totals: BTreeMap<&'static str, usize> = BTreeMap::new();
    for path in &files {
        let bytes = std::fs::read(path)?;
        let verdicts: Vec<String> = VerifyLevel::ALL
            .iter()
            .map(|&level| match Frame::parse_with(&bytes, &ReadOptions::new().level(level)) {
                Ok(_) => "ok".to_string(),
                Err(err) => err.code().name().to_string(),
            })
            .collect();
        let full = match Frame::parse_with(&bytes, &ReadOptions::new().level(VerifyLevel::Full)) {
            Ok(_) => "ok",
            Err(err) => err.code().name(),
        };
        *totals.entry(full).or_default() += 1;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "{:<34} {:>9}  {:<18} {:<18} {:<18} {:<18}",
            name,
            bytes.len(),
            verdicts[0],
            verdicts[1],
            verdicts[2],
            verdicts[3]
        );
    }
    println!("summary at the full level: {totals:?}");
    Ok(())
}
