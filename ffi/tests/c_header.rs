//! The committed C headers are exactly what cbindgen generates from the C ABI crate:
//! `include/membrane_frame_core.h` (cbindgen.toml) has every item but those of the
//! cluster modules, `include/membrane_frame_cluster.h` (ffi/cbindgen-cluster.toml on top
//! of cbindgen.toml) has those, and `include/membrane_frame.h` includes both.
//!
//! Regenerate: `MEMBRANE_BLESS=1 cargo test -p membrane-frame-ffi --lib c_header`.

use std::collections::BTreeSet;
use std::path::Path;

/// The modules of ffi/src whose items make the cluster header.
const CLUSTER_MODULES: [&str; 3] = ["snapshot.rs", "tombstone.rs", "refcount.rs"];

/// The typed enums of the core header: (tag, source file, name prefix) — every
/// `pub const NAME: u32 = N;` of the file whose name has the prefix (all of the file's
/// but the MBR_CLASS_* for the status codes) becomes an enumerator of the tag.
const TYPED_ENUMS: [(&str, &str, &str); 10] = [
    ("mbr_status_code", "status.rs", "MBR_"),
    ("mbr_error_class", "status.rs", "MBR_CLASS_"),
    ("mbr_verify_level", "frame.rs", "MBR_LEVEL_"),
    ("mbr_parse_mode", "frame.rs", "MBR_MODE_"),
    ("mbr_element_type", "frame.rs", "MBR_ELEMENT_"),
    ("mbr_identity_field", "identity.rs", "MBR_FIELD_"),
    ("mbr_dtype", "identity.rs", "MBR_DTYPE_"),
    ("mbr_consistency", "envelope.rs", "MBR_CONSISTENCY_"),
    ("mbr_envelope_field", "envelope.rs", "MBR_ENVELOPE_FIELD_"),
    ("mbr_migration_kind", "migrate.rs", "MBR_MIGRATION_"),
];

/// C enums with the values of the `#define`d constants, put before them: for
/// documentation, and for C23 and C++ code that wants the type. Functions keep taking
/// and returning `uint32_t`, and the `#define`s (which follow, and shadow the enumerator
/// names from there on with the same values) are unchanged. Generated from the Rust
/// constants, so they cannot drift.
fn typed_enums(root: &Path) -> String {
    let mut out = String::from(
        &[
            "",
            "/* Typed enums of the constants below, for documentation and for C23 and C++ code that",
            " * wants the type (enum mbr_dtype d = MBR_DTYPE_INT8;). Every function keeps taking and",
            " * returning uint32_t, and each #define below keeps its value: the enumerators have the",
            " * same ones (they are generated from the same constants). */",
            "#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L)",
            "#define MBR_ENUM_UINT32 : uint32_t",
            "#else",
            "#define MBR_ENUM_UINT32",
            "#endif",
            "",
        ]
        .join("\n"),
    );
    for (tag, file, prefix) in TYPED_ENUMS {
        let source = std::fs::read_to_string(root.join("ffi/src").join(file)).expect("an ffi source file");
        let constants: Vec<(String, String)> = source
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("pub const ")?;
                let (name, value) = rest.split_once(": u32 = ")?;
                let value = value.strip_suffix(';')?;
                let is_number = value.chars().all(|c| c.is_ascii_digit());
                let excluded = prefix == "MBR_" && name.starts_with("MBR_CLASS_");
                (name.starts_with(prefix) && is_number && !excluded).then(|| (name.to_owned(), value.to_owned()))
            })
            .collect();
        assert!(constants.len() >= 2, "{tag}: no constants with prefix {prefix} in {file}");
        out.push_str(&format!("enum {tag} MBR_ENUM_UINT32 {{\n"));
        for (name, value) in constants {
            out.push_str(&format!("    {name} = {value},\n"));
        }
        out.push_str("};\n");
    }
    out
}

fn base_config(root: &Path) -> cbindgen::Config {
    cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml is readable")
}

fn generate(config: cbindgen::Config, sources: &[std::path::PathBuf]) -> String {
    let mut builder = cbindgen::Builder::new().with_config(config);
    for source in sources {
        builder = builder.with_src(source);
    }
    let bindings = builder.generate().expect("cbindgen generates the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

/// The names a header declares: macros, types, functions (as cbindgen writes them).
fn declared_names(header: &str) -> BTreeSet<String> {
    let ident = |text: &str| -> String { text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut names = BTreeSet::new();
    let mut lines = header.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("#define ") {
            names.insert(ident(rest));
        } else if let Some(rest) = line.strip_prefix("} ") {
            names.insert(ident(rest));
        } else if let Some(rest) = line.strip_prefix("typedef ").filter(|rest| !rest.starts_with("char ")) {
            // (`typedef char` is a trailer's compile-time size check, not an item)
            // `typedef struct name {`, `typedef struct name name;`, `typedef void (*name)(`
            match rest.find("(*") {
                Some(at) => names.insert(ident(&rest[at + 2..])),
                None => names.insert(ident(rest.trim_start_matches("struct ").trim_start_matches("enum "))),
            };
        } else if line.starts_with("MBR_NODISCARD MBR_API") {
            if let Some(declaration) = lines.next() {
                let before_paren = declaration.split('(').next().unwrap_or("");
                names.insert(ident(before_paren.rsplit([' ', '*']).next().unwrap_or("")));
            }
        }
    }
    names.remove("");
    names
}

/// The core and cluster headers, generated.
fn generate_both(root: &Path) -> (String, String) {
    let src = root.join("ffi/src");
    let everything = [src.join("lib.rs")];
    let cluster_sources: Vec<_> = CLUSTER_MODULES.iter().map(|module| src.join(module)).collect();

    // What the cluster modules declare, generated alone (their references to core types
    // are written by name, which the core header's typedefs resolve).
    let cluster_names = declared_names(&generate(base_config(root), &cluster_sources));
    let all_names = declared_names(&generate(base_config(root), &everything));
    assert!(cluster_names.is_subset(&all_names), "the cluster modules declare only crate items");

    let mut core = base_config(root);
    core.export.exclude = cluster_names.iter().cloned().collect();
    core.after_includes = Some(format!("{}{}", core.after_includes.unwrap_or_default(), typed_enums(root)));

    let overrides =
        cbindgen::Config::from_file(root.join("ffi/cbindgen-cluster.toml")).expect("ffi/cbindgen-cluster.toml");
    let mut cluster = base_config(root);
    cluster.export.exclude = all_names.difference(&cluster_names).cloned().collect();
    cluster.include_guard = overrides.include_guard;
    cluster.includes = overrides.includes;
    cluster.header = overrides.header;
    cluster.trailer = overrides.trailer;
    cluster.after_includes = None; // the core header's macros come with its include

    (generate(core, &everything), generate(cluster, &everything))
}

/// The first differing line, with a little context, for the failure message.
fn first_difference(name: &str, committed: &str, generated: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (committed.lines().collect(), generated.lines().collect());
    let at = old.iter().zip(&new).position(|(a, b)| a != b).unwrap_or(old.len().min(new.len()));
    let show = |lines: &[&str]| {
        lines
            .iter()
            .enumerate()
            .skip(at.saturating_sub(2))
            .take(5)
            .map(|(n, l)| format!("  {:>5} | {l}\n", n + 1))
            .collect::<String>()
    };
    format!(
        "first difference at line {} (committed {} lines, generated {} lines)\n--- committed {name}\n{}+++ generated from ffi/src\n{}",
        at + 1,
        old.len(),
        new.len(),
        show(&old),
        show(&new)
    )
}

#[test]
// File I/O and a whole code generator: nothing for Miri to check (the plain test run has it).
#[cfg_attr(miri, ignore)]
fn committed_headers_match_cbindgen_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("ffi/ lies in the repository");
    let (core, cluster) = generate_both(root);
    let bless = std::env::var_os("MEMBRANE_BLESS").is_some_and(|v| v == "1");
    for (name, generated) in [("include/membrane_frame_core.h", &core), ("include/membrane_frame_cluster.h", &cluster)]
    {
        let path = root.join(name);
        if bless {
            std::fs::write(&path, generated).unwrap_or_else(|err| panic!("write {name}: {err}"));
            println!("wrote {}", path.display());
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            &committed == generated,
            "{name} is stale: the C ABI in ffi/src changed without regenerating it.\n\
             Run `MEMBRANE_BLESS=1 cargo test -p membrane-frame-ffi --lib c_header` and commit the headers.\n{}",
            first_difference(name, &committed, generated)
        );
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn every_item_is_in_exactly_one_header_and_the_umbrella_includes_both() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("ffi/ lies in the repository");
    let (core, cluster) = generate_both(root);
    let all = declared_names(&generate(base_config(root), &[root.join("ffi/src/lib.rs")]));
    let (core_names, cluster_names) = (declared_names(&core), declared_names(&cluster));
    assert!(
        core_names.is_disjoint(&cluster_names),
        "{:?}",
        core_names.intersection(&cluster_names).collect::<Vec<_>>()
    );
    let split: BTreeSet<String> = core_names.union(&cluster_names).cloned().collect();
    let missing: Vec<_> = all.difference(&split).collect();
    assert!(missing.is_empty(), "declared in neither header: {missing:?}");
    assert!(cluster_names.contains("mbr_snapshot_parse") && core_names.contains("mbr_frame_parse"));
    let umbrella = std::fs::read_to_string(root.join("include/membrane_frame.h")).expect("include/membrane_frame.h");
    assert!(umbrella.contains("#include \"membrane_frame_core.h\""));
    assert!(umbrella.contains("#include \"membrane_frame_cluster.h\""));
}
