//! Which compression code runs, and how busy lanes are put through it.
//!
//! Three kernels exist because cores differ in what limits them (docs/performance.md):
//! where the SHA unit starts a `sha256rnds2` every cycle (AMD Zen 4) three
//! interleaved SHA-NI chains are needed to hide its latency; where it starts one every
//! second or third cycle (AMD Zen 1, an Intel Xeon) two chains fill it; and on that Intel
//! core sixteen messages in AVX-512 lanes, with no SHA unit at all, beat both.
//! [`compress_side_by_side`] fits whatever lanes are busy to the chosen kernel.

#[cfg(target_arch = "x86_64")]
use super::{avx512, sha_ni};
use super::{H0, LANES};
use crate::page_ahead;
use core::ops::Range;
#[cfg(target_arch = "x86_64")]
use core::sync::atomic::{AtomicU8, Ordering};

/// Which compression code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Sixteen messages a step in the lanes of AVX-512 registers (x86-64 with `avx512f`,
    /// `avx512bw`): rotates and three-input logic, no SHA unit. For Intel cores with
    /// AVX-512; three lanes or fewer go through [`Kernel::ShaNiX2`] (or the portable
    /// code without SHA-NI), where sixteen-wide steps would be mostly wasted.
    Avx512X16,
    /// The interleaved SHA-NI kernel stepping three messages together (x86-64 with `sha`,
    /// `ssse3`, `sse4.1`): for cores that start a `sha256rnds2` every cycle (AMD Zen 4),
    /// where it takes three chains to hide the instruction's latency.
    ShaNiX3,
    /// The same kernel stepping two messages together: for cores that start a
    /// `sha256rnds2` about every second cycle (AMD Zen 1, an Intel Xeon), where two
    /// chains fill the unit and a third only adds register pressure.
    ShaNiX2,
    /// `sha2`'s compression function, one lane after another (any CPU).
    Portable,
}

impl Kernel {
    /// Every kernel, widest first.
    pub const ALL: [Kernel; 4] = [Kernel::Avx512X16, Kernel::ShaNiX3, Kernel::ShaNiX2, Kernel::Portable];

    /// The fastest kernel this CPU runs (detected once, then cached: `cpuid` traps to the
    /// hypervisor in a VM), as [`Kernel::for_cpu`] chooses it.
    pub fn detect() -> Kernel {
        // 0 until the first call has probed; then the kernel's place in `ALL`, plus one.
        #[cfg(target_arch = "x86_64")]
        static DETECTED: AtomicU8 = AtomicU8::new(0);
        #[cfg(target_arch = "x86_64")]
        {
            let known = usize::from(DETECTED.load(Ordering::Relaxed));
            if let Some(&kernel) = known.checked_sub(1).and_then(|at| Kernel::ALL.get(at)) {
                return kernel;
            }
        }
        let kernel = Kernel::probe();
        // Elsewhere the probe costs nothing, and no cache takes static RAM (none on a
        // microcontroller).
        #[cfg(target_arch = "x86_64")]
        if let Some(at) = Kernel::ALL.iter().position(|&each| each == kernel) {
            DETECTED.store(at as u8 + 1, Ordering::Relaxed);
        }
        kernel
    }

    /// [`detect`](Self::detect) without the cache.
    fn probe() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if sha_ni::available() || avx512::available() {
            let (vendor, family) = sha_ni::vendor_and_family();
            return Kernel::for_cpu(&vendor, family, sha_ni::available(), avx512::available());
        }
        Kernel::Portable
    }

    /// The kernel for a CPU by its `cpuid` vendor and family and whether it has SHA-NI
    /// and AVX-512 (`avx512f` and `avx512bw`): the AVX-512 kernel on Intel cores that
    /// have it; else SHA-NI, three lanes on AMD family 0x19 and later (Zen 3 to 5;
    /// measured on Zen 4) and two elsewhere; else AVX-512 where there is no SHA-NI; else
    /// the portable code. Measured (in cache, against single-stream `sha2`): on an Intel
    /// Xeon, AVX-512 2.17x, two SHA-NI lanes 1.25x, three 1.21x; on Zen 1, two lanes
    /// 1.73x, three 1.51x; on Zen 4, three lanes up to 1.4x faster than two, and the
    /// issue's AVX-512 prototype 1.8x against 2.1x for three lanes.
    pub fn for_cpu(vendor: &[u8; 12], family: u32, sha_ni: bool, avx512: bool) -> Kernel {
        match (sha_ni, avx512) {
            (_, true) if vendor == b"GenuineIntel" => Kernel::Avx512X16,
            (true, _) if vendor == b"AuthenticAMD" && family >= 0x19 => Kernel::ShaNiX3,
            (true, _) => Kernel::ShaNiX2,
            (false, true) => Kernel::Avx512X16,
            (false, false) => Kernel::Portable,
        }
    }

    /// `"avx512-x16"`, `"sha-ni-x3"`, `"sha-ni-x2"` or `"portable"`.
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Avx512X16 => "avx512-x16",
            Kernel::ShaNiX3 => "sha-ni-x3",
            Kernel::ShaNiX2 => "sha-ni-x2",
            Kernel::Portable => "portable",
        }
    }

    /// How many messages the kernel steps together (1 for the portable code).
    pub const fn width(self) -> usize {
        match self {
            Kernel::Avx512X16 => 16,
            Kernel::ShaNiX3 => 3,
            Kernel::ShaNiX2 => 2,
            Kernel::Portable => 1,
        }
    }

    /// The kernel for [`LANES`] lanes or fewer: itself, or for the AVX-512 kernel the
    /// two SHA-NI lanes (the portable code on a CPU without SHA-NI).
    pub fn narrow(self) -> Kernel {
        match self {
            Kernel::Avx512X16 if Kernel::ShaNiX2.runs_here() => Kernel::ShaNiX2,
            Kernel::Avx512X16 => Kernel::Portable,
            other => other,
        }
    }

    /// Every kernel this CPU runs, widest first (the portable code last, everywhere).
    pub fn on_this_cpu() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.into_iter().filter(|kernel| kernel.runs_here())
    }

    /// Messages kept in flight for the kernel: its width, and at least [`LANES`] (what
    /// `hash_batch` keeps, and `membrane-frame verify` keeps files a worker).
    pub fn in_flight(self) -> usize {
        self.width().max(LANES)
    }

    /// Whether this CPU has what the kernel needs.
    pub fn runs_here(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        match self {
            Kernel::Avx512X16 => return avx512::available(),
            Kernel::ShaNiX3 | Kernel::ShaNiX2 => return sha_ni::available(),
            Kernel::Portable => {}
        }
        self == Kernel::Portable
    }

    /// How many busy lanes it takes for a step of the full width to beat stepping them a
    /// few at a time through [`narrow`](Self::narrow).
    fn wide_from(self) -> usize {
        wide_from_beside(self.narrow())
    }

    /// Compress each lane's blocks into its state (the same number of blocks each), and
    /// say which code ran: the portable code for a kernel this CPU lacks, and
    /// [`narrow`](Self::narrow)'s for the AVX-512 kernel asked for fewer than sixteen
    /// lanes. The blocks go a page at a time, each lane read ahead (`crate::page_ahead`).
    fn compress<const N: usize>(self, states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N]) -> Kernel {
        const BLOCKS: usize = page_ahead::PIECE / 64;
        let count = blocks.iter().map(|blocks| blocks.len()).min().unwrap_or(0);
        let mut start = 0;
        loop {
            let end = count.min(start + BLOCKS);
            for lane in blocks {
                page_ahead::touch(lane.as_flattened(), start * 64 + page_ahead::AHEAD);
            }
            let ran = self.compress_piece(states, blocks.map(|lane| lane.get(start..end).unwrap_or_default()));
            if end == count {
                return ran;
            }
            start = end;
        }
    }

    /// [`compress`](Self::compress) without the reads ahead.
    fn compress_piece<const N: usize>(self, states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N]) -> Kernel {
        #[cfg(target_arch = "x86_64")]
        match self {
            Kernel::Avx512X16 => {
                let sixteen = <&mut [[u32; 8]; avx512::WIDTH]>::try_from(&mut states[..]);
                if let (Ok(states), Ok(blocks)) = (sixteen, blocks[..].try_into()) {
                    if avx512::compress_if_available(states, blocks) {
                        return self;
                    }
                }
                return self.narrow().compress_piece(states, blocks);
            }
            Kernel::ShaNiX3 | Kernel::ShaNiX2 if sha_ni::compress_if_available(states, blocks) => return self,
            _ => {}
        }
        for (state, blocks) in states.iter_mut().zip(blocks) {
            sha2::block_api::compress256(state, blocks);
        }
        Kernel::Portable
    }
}

/// How many busy lanes a sixteen-wide step needs to beat the narrow kernel `narrow`:
/// sixteen AVX-512 lanes ran at 1.72x two SHA-NI lanes, so ten busy lanes pay
/// (10/16 × 1.72 > 1); the portable code is slower than any two AVX-512 lanes.
fn wide_from_beside(narrow: Kernel) -> usize {
    match narrow {
        Kernel::Portable => 2,
        _ => 10,
    }
}

/// Compress the first `count` blocks of every lane that has blocks into its state, where
/// `count` is the fewest any of them has, and move those lanes' slices past them; returns
/// `count` (0 when no lane has blocks). With enough busy lanes a kernel wider than
/// [`LANES`] steps all `M` of them (`M` its width), idle ones hashing a copy of a busy
/// lane's blocks into a state nobody reads; otherwise the busy lanes go a few at a time
/// ([`a_few_at_a_time`]).
pub(super) fn compress_side_by_side<const M: usize>(
    kernel: Kernel,
    states: &mut [[u32; 8]; M],
    blocks: &mut [&[[u8; 64]]; M],
) -> usize {
    let count = blocks.iter().map(|blocks| blocks.len()).filter(|&len| len > 0).min().unwrap_or(0);
    if count == 0 {
        return 0;
    }
    let mut busy = [0usize; M];
    let mut busy_count = 0;
    for (lane, _) in blocks.iter().enumerate().filter(|(_, blocks)| !blocks.is_empty()) {
        if let Some(slot) = busy.get_mut(busy_count) {
            *slot = lane;
            busy_count += 1;
        }
    }
    let busy = busy.get(..busy_count).unwrap_or_default();
    let run = |lane: usize, range: Range<usize>| -> &[[u8; 64]] {
        blocks.get(lane).and_then(|blocks| blocks.get(range)).unwrap_or_default()
    };
    if kernel.width() > LANES && busy_count >= kernel.wide_from() {
        let filler = busy.first().map_or(&[][..], |&lane| run(lane, 0..count));
        let all: [&[[u8; 64]]; M] = core::array::from_fn(|lane| match run(lane, 0..count) {
            [] => filler,
            blocks => blocks,
        });
        let mut results = *states;
        kernel.compress(&mut results, all);
        for &lane in busy {
            if let (Some(state), Some(&result)) = (states.get_mut(lane), results.get(lane)) {
                *state = result;
            }
        }
    } else {
        a_few_at_a_time(kernel.narrow(), states, busy, count, run);
    }
    for blocks in blocks.iter_mut().filter(|blocks| !blocks.is_empty()) {
        *blocks = blocks.get(count..).unwrap_or_default();
    }
    count
}

/// `count` blocks of each `busy` lane through a kernel at most three wide: groups of its
/// width, a lone lane through `sha2` alone (a kernel's other lanes would be wasted work),
/// three lanes on a kernel two wide [`in_pairs`], and four on one three wide as two pairs.
fn a_few_at_a_time<'b, const M: usize>(
    kernel: Kernel,
    states: &mut [[u32; 8]; M],
    busy: &[usize],
    count: usize,
    run: impl Fn(usize, Range<usize>) -> &'b [[u8; 64]] + Copy,
) {
    let mut rest = busy;
    loop {
        let take = match (kernel.width(), rest) {
            (_, []) => return,
            (2, &[a, b, c]) => {
                in_pairs(kernel, states, [a, b, c], count, run);
                return;
            }
            (1, _) | (_, [_]) => 1,
            (2, _) | (3, [_, _]) | (3, [_, _, _, _]) => 2,
            _ => 3,
        };
        let (group, tail) = rest.split_at(take.min(rest.len()));
        match *group {
            [a] => compress_lanes(Kernel::Portable, states, [a], [run(a, 0..count)]),
            [a, b] => compress_lanes(kernel, states, [a, b], [run(a, 0..count), run(b, 0..count)]),
            [a, b, c] => {
                compress_lanes(kernel, states, [a, b, c], [run(a, 0..count), run(b, 0..count), run(c, 0..count)]);
            }
            _ => {}
        }
        rest = tail;
    }
}

/// `count` blocks of each of three lanes `[a, b, c]` through a kernel two wide, with no
/// lane running alone but for one block when `count` is odd: with `half = count / 2`
/// and `rest = count - half`, `a` and `b` take `half` blocks together, then `a` and `c`
/// `rest`, then `b` and `c` `half`, and an odd `count` leaves `b` one block to run alone.
fn in_pairs<'b, const M: usize>(
    kernel: Kernel,
    states: &mut [[u32; 8]; M],
    [a, b, c]: [usize; 3],
    count: usize,
    run: impl Fn(usize, Range<usize>) -> &'b [[u8; 64]],
) {
    let half = count / 2;
    let rest = count - half;
    compress_lanes(kernel, states, [a, b], [run(a, 0..half), run(b, 0..half)]);
    compress_lanes(kernel, states, [a, c], [run(a, half..count), run(c, 0..rest)]);
    compress_lanes(kernel, states, [b, c], [run(b, half..2 * half), run(c, rest..count)]);
    compress_lanes(Kernel::Portable, states, [b], [run(b, 2 * half..count)]);
}

/// The kernel over the lanes `lanes` of `states` (distinct lanes, the same number of
/// blocks each).
fn compress_lanes<const N: usize, const M: usize>(
    kernel: Kernel,
    states: &mut [[u32; 8]; M],
    lanes: [usize; N],
    blocks: [&[[u8; 64]]; N],
) {
    let mut picked = lanes.map(|lane| states.get(lane).copied().unwrap_or(H0));
    kernel.compress(&mut picked, blocks);
    for (lane, state) in lanes.into_iter().zip(picked) {
        if let Some(slot) = states.get_mut(lane) {
            *slot = state;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic 64-byte blocks.
    fn blocks(count: usize, seed: u8) -> std::vec::Vec<[u8; 64]> {
        (0..count).map(|i| core::array::from_fn(|j| (i * 131 + j * 7) as u8 ^ seed)).collect()
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    fn the_kernel_chosen_is_the_rule_for_this_cpu() {
        let has_sha_ni = std::is_x86_feature_detected!("sha") && std::is_x86_feature_detected!("sse4.1");
        let has_avx512 = std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw");
        assert_eq!(Kernel::ShaNiX2.runs_here(), has_sha_ni);
        assert_eq!(Kernel::Avx512X16.runs_here(), has_avx512);
        let (vendor, family) = sha_ni::vendor_and_family();
        assert_eq!(Kernel::detect(), Kernel::for_cpu(&vendor, family, has_sha_ni, has_avx512));
        assert_eq!(Kernel::detect(), Kernel::detect(), "cached");
        std::println!(
            "this CPU: {} family {family:#x}, SHA-NI {has_sha_ni}, AVX-512 {has_avx512}: {}",
            core::str::from_utf8(&vendor).unwrap_or("?"),
            Kernel::detect().name()
        );
        if !has_sha_ni || !has_avx512 {
            std::println!("NOTE: kernels this CPU lacks were tested only through their fallbacks");
        }
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    fn cpuid_names_the_vendor_and_family_linux_reports() {
        let (vendor, family) = sha_ni::vendor_and_family();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo.lines().find(|line| line.starts_with(name)).and_then(|line| line.split(':').nth(1)).map(str::trim)
        };
        match (field("vendor_id"), field("cpu family")) {
            (Some(vendor_id), Some(cpu_family)) => {
                assert_eq!(vendor_id.as_bytes(), &vendor);
                assert_eq!(cpu_family.parse::<u32>().ok(), Some(family));
            }
            _ => std::println!("NOTE: no /proc/cpuinfo here: cpuid's vendor and family not cross-checked"),
        }
    }

    #[test]
    fn the_kernel_follows_the_core() {
        // Measured: AVX-512 on an Intel Xeon; three SHA-NI lanes on Zen 4 (AMD family
        // 0x19), two on Zen 1 (0x17) and on Intel without AVX-512.
        let intel = b"GenuineIntel";
        let amd = b"AuthenticAMD";
        assert_eq!(Kernel::for_cpu(intel, 6, true, true), Kernel::Avx512X16);
        assert_eq!(Kernel::for_cpu(intel, 6, false, true), Kernel::Avx512X16);
        assert_eq!(Kernel::for_cpu(intel, 6, true, false), Kernel::ShaNiX2);
        assert_eq!(Kernel::for_cpu(amd, 0x19, true, true), Kernel::ShaNiX3);
        assert_eq!(Kernel::for_cpu(amd, 0x1a, true, true), Kernel::ShaNiX3);
        assert_eq!(Kernel::for_cpu(amd, 0x18, true, false), Kernel::ShaNiX2);
        assert_eq!(Kernel::for_cpu(amd, 0x17, true, false), Kernel::ShaNiX2);
        assert_eq!(Kernel::for_cpu(amd, 0x19, false, true), Kernel::Avx512X16);
        assert_eq!(Kernel::for_cpu(b"HygonGenuine", 0x19, true, false), Kernel::ShaNiX2);
        assert_eq!(Kernel::for_cpu(intel, 6, false, false), Kernel::Portable);
        assert_eq!(Kernel::ALL.map(Kernel::width), [16, 3, 2, 1]);
        assert_eq!(Kernel::ALL.map(Kernel::in_flight), [16, LANES, LANES, LANES]);
        // The kernels this CPU runs: the one detected among them, the portable code last.
        let here: std::vec::Vec<Kernel> = Kernel::on_this_cpu().collect();
        assert!(here.contains(&Kernel::detect()), "{here:?}");
        assert_eq!(here.last(), Some(&Kernel::Portable));
        assert!(here.iter().all(|kernel| kernel.runs_here()));
        for kernel in Kernel::ALL {
            assert!(kernel.narrow().width() <= LANES, "{}", kernel.name());
        }
    }

    #[test]
    fn the_wide_step_is_taken_from_the_measured_number_of_busy_lanes() {
        // Ten of sixteen AVX-512 lanes beat two SHA-NI lanes; two beat the portable code.
        assert_eq!(wide_from_beside(Kernel::ShaNiX2), 10);
        assert_eq!(wide_from_beside(Kernel::Portable), 2);
        for kernel in Kernel::ALL {
            assert_eq!(kernel.wide_from(), wide_from_beside(kernel.narrow()), "{}", kernel.name());
        }
        assert!(Kernel::Avx512X16.wide_from() > LANES || !Kernel::ShaNiX2.runs_here());
    }

    #[test]
    fn the_kernel_names_are_the_documented_ones() {
        // Benchmarks and bug reports print them.
        assert_eq!(Kernel::ALL.map(Kernel::name), ["avx512-x16", "sha-ni-x3", "sha-ni-x2", "portable"]);
    }

    #[test]
    fn each_kernel_runs_the_code_it_names() {
        // Forcing `Portable` must run sha2's code (that is how the fallback is tested on a
        // CPU with SHA-NI); a kernel this CPU has must run its own code, at its width.
        let blocks = blocks(2, 0x61);
        let mut expected = H0;
        sha2::block_api::compress256(&mut expected, &blocks);
        for kernel in Kernel::ALL {
            let runs = |width: usize| match kernel {
                Kernel::Avx512X16 if width == 16 && kernel.runs_here() => kernel,
                Kernel::Avx512X16 => kernel.narrow(),
                _ if kernel.runs_here() => kernel,
                _ => Kernel::Portable,
            };
            let mut three = [H0; 3];
            assert_eq!(kernel.compress(&mut three, [&blocks[..]; 3]), runs(3), "{} on 3", kernel.name());
            assert_eq!(three, [expected; 3], "{}", kernel.name());
            let mut sixteen = [H0; 16];
            assert_eq!(kernel.compress(&mut sixteen, [&blocks[..]; 16]), runs(16), "{} on 16", kernel.name());
            assert_eq!(sixteen, [expected; 16], "{}", kernel.name());
        }
    }

    /// The states `compress_side_by_side` leaves: each lane's own blocks, in order.
    fn expected<const M: usize>(
        starts: &[[u32; 8]; M],
        lanes: &[std::vec::Vec<[u8; 64]>],
        count: usize,
    ) -> [[u32; 8]; M] {
        let mut states = *starts;
        for (state, blocks) in states.iter_mut().zip(lanes) {
            if !blocks.is_empty() {
                sha2::block_api::compress256(state, &blocks[..count]);
            }
        }
        states
    }

    #[test]
    fn any_busy_lanes_hash_their_own_blocks_in_order() {
        // Every number of busy lanes, in scattered slots, with blocks left over in some,
        // through every kernel: wide steps with fillers, groups, pairs' turns, lone lanes.
        let counts: &[usize] = if cfg!(miri) { &[1, 2] } else { &[1, 2, 3, 5, 8] };
        for kernel in Kernel::on_this_cpu() {
            for busy in 1..=16usize {
                for &count in counts {
                    let lanes: std::vec::Vec<std::vec::Vec<[u8; 64]>> = (0..16)
                        .map(|lane| {
                            let is_busy = (lane * 7) % 16 < busy;
                            let extra = lane % 3;
                            if is_busy {
                                blocks(count + extra, lane as u8)
                            } else {
                                std::vec::Vec::new()
                            }
                        })
                        .collect();
                    let starts: [[u32; 8]; 16] = core::array::from_fn(|lane| [lane as u32 * 1000; 8]);
                    let mut states = starts;
                    let mut views: [&[[u8; 64]]; 16] = core::array::from_fn(|lane| lanes[lane].as_slice());
                    let fewest = lanes.iter().map(|b| b.len()).filter(|&n| n > 0).min().unwrap();
                    assert_eq!(compress_side_by_side(kernel, &mut states, &mut views), fewest);
                    assert_eq!(states, expected(&starts, &lanes, fewest), "{}, {busy} busy", kernel.name());
                    for (view, blocks) in views.iter().zip(&lanes) {
                        assert_eq!(view.len(), blocks.len().saturating_sub(fewest), "slices moved past the step");
                    }
                }
                if cfg!(miri) && busy > 4 {
                    break;
                }
            }
        }
    }

    #[test]
    fn three_lanes_in_pairs_give_each_lane_its_own_blocks_in_order() {
        // Every count, odd and even, and every order of lanes: each lane's state must be
        // its own blocks compressed in order, whatever turns the pairs take.
        let lanes = [blocks(9, 1), blocks(9, 2), blocks(9, 3)];
        let counts = if cfg!(miri) { 1..=3 } else { 1..=9 };
        for kernel in Kernel::on_this_cpu() {
            for count in counts.clone() {
                for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
                    let starts = [H0, [1; 8], [2; 8]];
                    let mut states = starts;
                    in_pairs(kernel.narrow(), &mut states, order, count, |lane, range| &lanes[lane][range]);
                    assert_eq!(
                        states,
                        expected(&starts, &lanes, count),
                        "{count} blocks, lanes {order:?}, {}",
                        kernel.name()
                    );
                }
            }
        }
    }
}
