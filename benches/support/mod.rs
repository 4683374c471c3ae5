//! What the benchmarks share: a thread-CPU-time clock for Criterion, the paired
//! (alternating) ratio check, and the run's context (where Criterion writes, whether this
//! is a full run, the machine), and the fixtures' common parts. Each bench uses a part
//! of it.
#![allow(dead_code)]

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use membrane_frame::{Dtype, IdentityValues, InclusiveRange};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Thread CPU time

/// Criterion measurement: CPU time of this thread (Linux `CLOCK_THREAD_CPUTIME_ID`).
/// Unlike wall-clock time it does not count the time the thread waited for a CPU while
/// other processes ran, so on a busy two-core machine it still says what an operation
/// costs.
pub(crate) struct ThreadCpuTime;

pub(crate) static WALL_TIME: WallTime = WallTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        thread_cpu_time().unwrap_or_default()
    }
    fn end(&self, start: Duration) -> Duration {
        thread_cpu_time().unwrap_or_default().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WALL_TIME.formatter()
    }
}

/// CPU time this thread has used, where the platform can say.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
#[allow(unsafe_code)]
pub(crate) fn thread_cpu_time() -> Option<Duration> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut time = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one `struct timespec` (two 64-bit fields on 64-bit
    // Linux) into `time`, which is valid and exclusively borrowed for the call.
    let status = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) };
    (status == 0).then(|| Duration::new(time.tv_sec as u64, time.tv_nsec as u32))
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
pub(crate) fn thread_cpu_time() -> Option<Duration> {
    None
}

// ---------------------------------------------------------------------------------------
// The paired check

/// Per-round time per iteration (ns) of a target and its baseline, measured alternately.
#[derive(Default)]
pub(crate) struct Paired {
    pub(crate) target: Vec<f64>,
    pub(crate) baseline: Vec<f64>,
}

impl Paired {
    /// Median over rounds of baseline time / target time.
    pub(crate) fn throughput_ratio(&self) -> f64 {
        median(self.target.iter().zip(&self.baseline).map(|(t, b)| b / t).collect())
    }

    /// Median over rounds of target time / baseline time.
    pub(crate) fn time_ratio(&self) -> f64 {
        median(self.target.iter().zip(&self.baseline).map(|(t, b)| t / b).collect())
    }
}

pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Time `iters` calls of `f`; ns per call.
pub(crate) fn time_per_iter<T>(f: &mut impl FnMut() -> T, iters: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        black_box(f());
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

/// Warm `f` up; about how long one call takes (ns).
pub(crate) fn probe<T>(f: &mut impl FnMut() -> T) -> f64 {
    black_box(f());
    let mut iters = 1u64;
    loop {
        let ns = time_per_iter(f, iters);
        if ns * iters as f64 > 2e6 || iters >= 1 << 20 {
            return ns;
        }
        iters *= 4;
    }
}

/// `rounds` rounds of target and baseline, each timed over about `round` of calls,
/// alternating which goes first.
pub(crate) fn paired<A, B>(
    mut target: impl FnMut() -> A,
    mut baseline: impl FnMut() -> B,
    rounds: usize,
    round: Duration,
) -> Paired {
    let slower = probe(&mut target).max(probe(&mut baseline));
    let iters = ((round.as_nanos() as f64 / slower) as u64).max(1);
    let mut result = Paired::default();
    for r in 0..rounds {
        if r % 2 == 0 {
            result.target.push(time_per_iter(&mut target, iters));
            result.baseline.push(time_per_iter(&mut baseline, iters));
        } else {
            result.baseline.push(time_per_iter(&mut baseline, iters));
            result.target.push(time_per_iter(&mut target, iters));
        }
    }
    result
}

// ---------------------------------------------------------------------------------------

/// `<target>/criterion`, where Criterion keeps its estimates: `$CRITERION_HOME`, else
/// beside this binary (`<target>/release/deps/frame-*`).
pub(crate) fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    match exe.ancestors().nth(3) {
        Some(target) if !target.as_os_str().is_empty() => target.join("criterion"),
        _ => PathBuf::from("target/criterion"),
    }
}

/// Whether this is a full measuring run: no filter, not `--test`, `--list` or
/// `--profile-time` (the paired checks and the report only make sense then).
pub(crate) fn full_run() -> bool {
    const TAKES_VALUE: &[&str] = &[
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--color",
        "--output-format",
        "--plotting-backend",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--format",
        "-c",
        "-s",
        "-b",
    ];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--test" | "--list" | "--profile-time" => return false,
            a if TAKES_VALUE.contains(&a) => {
                args.next();
            }
            a if a.starts_with('-') => {}
            _ => return false, // a filter
        }
    }
    true
}

pub(crate) fn machine_summary() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown CPU", str::trim)
        .to_string();
    #[cfg(target_arch = "x86_64")]
    let sha_ni = if std::is_x86_feature_detected!("sha") { "SHA-NI present" } else { "no SHA-NI" };
    #[cfg(not(target_arch = "x86_64"))]
    let sha_ni = "not x86_64";
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!("{model}, {sha_ni}, {cores} cores; load average at the start: {}", load.trim())
}

/// The conformance vectors: `$MEMBRANE_VECTORS`, else `../shared/vectors` beside the crate.
pub(crate) fn vectors_dir() -> PathBuf {
    match std::env::var_os("MEMBRANE_VECTORS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/vectors"),
    }
}

/// The docs-hello identity (`frames/docs-hello.bin`) with another `payload_hash`.
pub(crate) fn kv_identity(payload_hash: &str) -> IdentityValues<'_> {
    IdentityValues {
        payload_hash,
        model_id: "llama-3-8b",
        model_revision: "",
        tokenizer_name: "llama-3-8b",
        tokenizer_revision: "",
        layer_range: InclusiveRange::new(0, 31),
        head_range: InclusiveRange::ALL_HEADS,
        token_span: InclusiveRange::new(0, 127),
        dtype: Dtype::Float16,
        shape: &[1, 32, 8, 128, 64],
    }
}
